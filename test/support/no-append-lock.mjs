// For the tests and the bench only, never for a deployment: loaded into an API node with
// `node --import` (NODE_OPTIONS, see noAppendLockEnv in cluster.ts), it makes the node's
// PostgreSQL connections skip the per-schema append lock (appendLockKey in
// src/store/postgres/store.ts), to show what the lock protects (test/cluster/ledger-order.test.ts)
// and what it costs (bench/applock.ts). LEDGER_TEST_BATCHES_IN_FLIGHT also lets the node run that
// many append batches at once (default 1, as shipped). LEDGER_TEST_APPEND_LOCK=early instead keeps
// the lock but takes it at BEGIN, before the facts are read, as the store did before it took it
// late: the bench's other baseline.
import pg from 'pg';
import { PostgresStore } from '../../dist/store/postgres/store.js';

const APPEND_LOCK = /SELECT pg_advisory_xact_lock\(hashtext\(E?'ledger-append:[a-z0-9_]+'\)\)/;
const query = pg.Client.prototype.query;
const appendBatch = PostgresStore.prototype.appendBatch;
if (typeof query !== 'function' || typeof appendBatch !== 'function') {
  throw new Error('no-append-lock: nothing to patch (pg.Client#query, PostgresStore#appendBatch)');
}
const inFlight = Number(process.env.LEDGER_TEST_BATCHES_IN_FLIGHT ?? '1');
const early = process.env.LEDGER_TEST_APPEND_LOCK === 'early';
/** The head of the append's first script (src/store/postgres/append.ts). */
const APPEND_BEGIN = /^BEGIN;\nSET LOCAL lock_timeout = [0-9]+;\n/;
let skipped = 0;

pg.Client.prototype.query = function (config, ...rest) {
  if (typeof config !== 'string' || !APPEND_LOCK.test(config)) return query.call(this, config, ...rest);
  if (skipped++ === 0 && !early) process.stderr.write('no-append-lock: the first append went without the append lock\n');
  // The script keeps its number of statements (the store reads their answers by position).
  if (!early) return query.call(this, config.replace(APPEND_LOCK, 'SELECT 1'), ...rest);
  const lock = APPEND_LOCK.exec(config)[0];
  return query.call(this, config.replace(`${lock};\n`, '').replace(APPEND_BEGIN, (begin) => `${begin}${lock};\n`), ...rest);
};

PostgresStore.prototype.appendBatch = function (questions, plan) {
  this.maxBatchesInFlight = inFlight;
  return appendBatch.call(this, questions, plan);
};
