// The service knows at start that its master keyring opens what it sealed, on both stores: a
// wrong key for sealed data, a malformed key, a missing key file, a keyring without a version the
// data is sealed under, and a wrong key for secrets sealed before key checks were kept each stop
// the start with one line (no stack trace, no key material); the right key starts, and records
// its check. The cases call the server's start function, which `ledger serve` runs; the command
// itself (one line on stderr, exit 2) is run in test/ops/master-key-serve.test.ts.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { parseKeyring, seal } from '../../src/vault/vault.ts';
import { ConfigError, loadConfig } from '../../src/config.ts';
import { startServer } from '../../src/server.ts';
import { connectionId } from '../../src/brokers/connections.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { openStore } from '../../src/store/open.ts';
import { forEachStore, runSql, type StoreKind } from '../support/stores.ts';
import { uniqueHandle } from '../support/app.ts';
import { keyringLoader } from '../../src/vault/service.ts';

const K1 = randomBytes(32).toString('base64');
const K2 = randomBytes(32).toString('base64');
const dir = mkdtempSync(join(tmpdir(), 'ledger-master-key-'));
after(() => rmSync(dir, { recursive: true, force: true }));
// Generated keys (the log's, PostgreSQL's data directory is ./data) land in the scratch directory.
process.chdir(dir);

/** The server's start function: null once it listened (then stopped), else what it threw. */
async function start(databaseUrl: string, env: Record<string, string>): Promise<Error | null> {
  try {
    const server = await startServer(loadConfig({
      PORT: '0', LEDGER_DATABASE_URL: databaseUrl, LEDGER_LOG_LEVEL: 'silent', LEDGER_SYNC_INTERVAL_S: '0', LEDGER_MARKET_DATA: 'none', ...env,
    }));
    await server.stop();
    return null;
  } catch (err) {
    return err as Error;
  }
}

function assertStartRefused(err: Error | null, line: RegExp): void {
  assert.ok(err, 'the service started');
  assert.ok(err instanceof ConfigError, `a configuration error (exit 2 with one line from ledger serve): ${err.stack}`);
  assert.doesNotMatch(err.message, /\n/, 'one line');
  assert.match(err.message, line);
  for (const key of [K1, K2]) assert.ok(!err.message.includes(key), 'no key material');
}

await forEachStore('ledger serve checks the master key', (kind: StoreKind) => {
  after(async () => {
    await kind.cleanup();
  });

  /**
   * A fresh database holding a broker connection's secret sealed under `keyring`; `checked`: as this
   * service seals (the keyring verified and its check recorded first), else as a service before key
   * checks did (no check recorded).
   */
  async function sealedDatabase(keyring: string, checked = true): Promise<string> {
    const url = await kind.freshUrl();
    const store = openStore(url);
    await store.migrate();
    try {
      const ring = parseKeyring(keyring);
      assert.ok(ring.ok);
      if (checked) {
        const config = loadConfig({ LEDGER_DATABASE_URL: url, LEDGER_MASTER_KEY: keyring });
        await keyringLoader(config.brokers, () => undefined, store.vault)();
      }
      const created = await new Operators(store, systemClock).createAgent({ handle: uniqueHandle('mk'), demo: false });
      assert.ok(created.ok);
      const id = connectionId();
      const now = new Date().toISOString();
      await store.brokers.createConnection({
        id, agentId: created.value.agent.id, kind: 'alpaca', environment: 'paper', status: 'active',
        credentials: { sealed: seal(ring.value, id, '{"api_key_id":"PK1","api_secret":"s"}'), keyVersion: ring.value.current.version },
        accounts: [], externalId: null, cursor: {}, lastSync: null, progress: null, lastError: null, pendingState: null,
        createdAt: now, updatedAt: now, disconnectedAt: null,
      });
      assert.equal((await runSql(store, 'SELECT version FROM master_key_checks')).length, checked ? ring.value.all.size : 0);
    } finally {
      await store.close();
    }
    return url;
  }

  test('a wrong key for sealed secrets is refused; the right key starts', async () => {
    const url = await sealedDatabase(K1);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: K2 }), /^LEDGER_MASTER_KEY: key version 1 is not the key this database's secrets were sealed with/);
    assert.equal(await start(url, { LEDGER_MASTER_KEY: K1 }), null);
  });

  test('a wrong key on a database with nothing sealed yet is refused once the first key is recorded', async () => {
    const url = await kind.freshUrl();
    assert.equal(await start(url, { LEDGER_MASTER_KEY: K1 }), null);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: K2 }), /^LEDGER_MASTER_KEY: key version 1 is not the key/);
  });

  test('a malformed key is refused', async () => {
    const url = await sealedDatabase(K1);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: 'not-a-key' }), /^LEDGER_MASTER_KEY: master key entry 1: not base64 of exactly 32 bytes$/);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: `1:${K1},1:${K2}` }), /^LEDGER_MASTER_KEY: master key version 1 appears twice$/);
  });

  test('a missing key file is refused', async () => {
    const url = await sealedDatabase(K1);
    const absent = join(dir, 'absent.key');
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY_FILE: absent }), /^LEDGER_MASTER_KEY_FILE .*absent\.key could not be read \(ENOENT\)$/);
  });

  test('a keyring without a version the data is sealed under is refused', async () => {
    const url = await sealedDatabase(`1:${K1},2:${K2}`);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: `1:${K1}` }), /^LEDGER_MASTER_KEY: the database holds secrets sealed under key version 2, which the keyring does not hold/);
    assert.equal(await start(url, { LEDGER_MASTER_KEY: `1:${K1},2:${K2}` }), null);
  });

  test('secrets sealed before key checks: a key that does not open them is refused, the right one starts and is recorded', async () => {
    const url = await sealedDatabase(K1, false);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: K2 }), /^LEDGER_MASTER_KEY: key version 1 does not open the secrets sealed under it/);
    assert.equal(await start(url, { LEDGER_MASTER_KEY: K1 }), null);
    assertStartRefused(await start(url, { LEDGER_MASTER_KEY: K2 }), /^LEDGER_MASTER_KEY: key version 1 is not the key/);
  });
});
