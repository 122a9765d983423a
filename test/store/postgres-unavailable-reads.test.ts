// Issue 24, finding 6: a PostgreSQL that cannot answer a public read in time (no free pool
// connection within connect_timeout, or a statement that waits past statement_timeout) answers
// 503 service_unavailable with Retry-After on every adapter's reads, the log's, the anchors' and
// the market's included, as the records' reads and the writes always did (docs/operations.md).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import pg from 'pg';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres/store.ts';
import { runAsPublicRead } from '../../src/runtime/read-scope.ts';
import { dropPostgresSchema, freshPostgresUrl, skipUnless } from '../support/services.ts';
import { testApp, type TestApp } from '../support/app.ts';

const skip = await skipUnless('postgres');

const RECORD_ID = 'dec_01JABCDEFGHJKMNPQRSTVWXYZ0';

/** The public reads served from the log's, the anchors' and the market's storage. */
const LOG_READS = ['/v1/log/checkpoint', '/v1/log/tile/0/000', `/v1/log/proof/inclusion?record_id=${RECORD_ID}`, '/v1/log/proof/consistency?from=1&to=2'];
const ANCHOR_READS = ['/v1/anchors', '/v1/anchors/1.ots', '/v1/transparency'];

function assertUnavailable(res: { statusCode: number; body: string; headers: Record<string, unknown> }, url: string): void {
  assert.equal(res.statusCode, 503, `${url}: ${res.body}`);
  const error = (JSON.parse(res.body) as { error: { code: string; request_id: string } }).error;
  assert.equal(error.code, 'service_unavailable', url);
  assert.equal(error.request_id, res.headers['request-id'], url);
  assert.equal(res.headers['retry-after'], '2', url);
}

describe('public reads on a PostgreSQL that cannot answer in time', { skip }, () => {
  let url: string;
  let store: PostgresStore;
  let t: TestApp;
  let handle: string;

  before(async () => {
    url = freshPostgresUrl();
    // One connection in each pool (writes, public reads), waited for at most 300 ms; a statement runs at most 500 ms.
    store = new PostgresStore({ ...parsePostgresUrl(url), poolSize: 1, readPoolSize: 1, timeouts: { connectMs: 300, statementMs: 500 } });
    await store.migrate();
    t = await testApp(store);
    handle = (await t.agent()).handle;
  });
  after(async () => {
    await t?.close();
    await store?.close();
    await dropPostgresSchema(url);
  });

  test('the pool has no free connection: the log and anchor reads answer 503 with Retry-After', async () => {
    // Public reads run on the read pool (store.pool inside a public read); hold its one connection.
    const held = await runAsPublicRead(() => store.pool.connect());
    try {
      for (const read of [...LOG_READS, ...ANCHOR_READS]) assertUnavailable(await t.app.inject({ url: read }), read);
    } finally {
      held.release();
    }
    assert.equal((await t.app.inject({ url: '/v1/anchors' })).statusCode, 200, 'reads answer again once a connection is free');
  });

  /** Runs `reads` while another session holds `table` locked, so their statements time out. */
  async function whileLocked(table: string, reads: string[]): Promise<void> {
    const locker = new pg.Client({ connectionString: parsePostgresUrl(url).connectionString });
    await locker.connect();
    try {
      await locker.query(`BEGIN; LOCK TABLE ${new URL(url).searchParams.get('schema')}.${table} IN ACCESS EXCLUSIVE MODE`);
      for (const read of reads) assertUnavailable(await t.app.inject({ url: read }), read);
    } finally {
      await locker.end();
    }
  }

  test('a statement past statement_timeout: the log, anchor and performance reads answer 503 with Retry-After', async () => {
    await whileLocked('log_checkpoints', ['/v1/log/checkpoint']);
    await whileLocked('log_tiles', ['/v1/log/tile/0/000']);
    await whileLocked('log_anchors', ['/v1/anchors']);
    await whileLocked('performance_reports', [`/v1/agents/${handle}/performance`, `/v1/agents/${handle}/performance?portfolio=broker`]);
  });
});
