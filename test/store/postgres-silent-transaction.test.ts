// A transaction whose connection goes silent fails after one query timeout, not two: the client
// is destroyed rather than sent a ROLLBACK that would wait as long again (the server aborts the
// transaction when the connection closes). The pool then opens a fresh connection.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { PostgresStore, parsePostgresUrl } from '../../src/store/postgres/store.ts';
import { StoreUnavailable, type AppendRows } from '../../src/store/port.ts';
import { FaultProxy } from '../support/fault-proxy.ts';
import { dropPostgresSchema, freshPostgresUrl, POSTGRES_URL, skipUnless } from '../support/services.ts';

const skip = await skipUnless('postgres');

const QUERY_TIMEOUT_MS = 1_000;
const NOTHING: AppendRows = { records: [], idempotencyKeys: [], nonces: [], heads: [] };

describe('a transaction on a connection that goes silent', { skip }, () => {
  const target = new URL(POSTGRES_URL);
  const proxy = new FaultProxy({ host: target.hostname, port: Number(target.port || 5432) });
  let url: string;
  let store: PostgresStore;

  before(async () => {
    url = freshPostgresUrl();
    const port = await proxy.listen();
    const proxied = new URL(url);
    proxied.host = `127.0.0.1:${port}`;
    store = new PostgresStore({ ...parsePostgresUrl(proxied.toString()), poolSize: 1, timeouts: { queryMs: QUERY_TIMEOUT_MS, connectMs: QUERY_TIMEOUT_MS } });
    await store.migrate();
  });
  after(async () => {
    await store?.close();
    await proxy.close();
    await dropPostgresSchema(url);
  });

  test('fails with StoreUnavailable after one query timeout, and the pool connects afresh once the network answers', async () => {
    await store.ping(); // the pool's one connection is open and idle
    proxy.stall();
    const started = Date.now();
    await assert.rejects(
      store.appendBatch({ agentIds: [], idempotencyKeys: [], signingKeyIds: [], nonces: [] }, () => ({ rows: NOTHING, result: null })),
      StoreUnavailable,
    );
    const ms = Date.now() - started;
    assert.ok(ms < QUERY_TIMEOUT_MS * 1.6, `failed after ${ms} ms (one query timeout is ${QUERY_TIMEOUT_MS} ms)`);
    proxy.restore();
    await store.ping();
  });
});
