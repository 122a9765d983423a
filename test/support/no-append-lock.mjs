// For the tests and the bench only, never for a deployment: loaded into an API node with
// `node --import` (NODE_OPTIONS, see noAppendLockEnv in cluster.ts), it makes the compiled
// PostgreSQL store commit its batches without the per-schema append lock (appendLockKey), to show
// what the lock protects (test/cluster/ledger-order.test.ts) and what it costs (bench/applock.ts).
// LEDGER_TEST_BATCHES_IN_FLIGHT also lets a node run that many batches at once (default 1).
import { PostgresStore } from '../../dist/store/postgres/store.js';

const proto = PostgresStore.prototype;
const inTransaction = proto.inTransaction;
const appendBatch = proto.appendBatch;
if (typeof inTransaction !== 'function' || typeof appendBatch !== 'function') {
  throw new Error('no-append-lock: PostgresStore has no inTransaction/appendBatch to patch');
}
const inFlight = Number(process.env.LEDGER_TEST_BATCHES_IN_FLIGHT ?? '1');

proto.inTransaction = function (work, begin) {
  const locking = typeof begin === 'string' && begin.includes('pg_advisory_xact_lock');
  return inTransaction.call(this, work, locking ? 'BEGIN' : begin);
};

proto.appendBatch = function (questions, plan) {
  this.maxBatchesInFlight = inFlight;
  return appendBatch.call(this, questions, plan);
};

process.stderr.write(`no-append-lock: appends commit without the append lock, ${inFlight} batch(es) in flight\n`);
