// The build (npm run build, which `npm test` runs first): dist/ holds the package's entries as
// package.json exports them, and the compiled code starts its worker threads from their compiled
// module files, with no TypeScript loader: the verifier thread, the WAL checkpointer and the
// `ledger verify` pool each answer from dist/. And `ledger` (bin/ledger.js) refuses to run a dist/
// older than src/, or none.
import assert from 'node:assert/strict';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { generateKeyPairSync, sign } from 'node:crypto';

const DIST = new URL('../../dist/', import.meta.url);
/** A compiled module, typed as its source (a variable path, so type checks never need dist/). */
const compiled = <T>(path: string): Promise<T> => import(new URL(path, DIST).href) as Promise<T>;

const dir = mkdtempSync(join(tmpdir(), 'ledger-build-'));
after(() => rmSync(dir, { recursive: true, force: true }));

before(() => {
  assert.ok(existsSync(new URL('cli/main.js', DIST)), 'dist/ is missing: run `npm run build` (npm test does)');
});

test('the package entries resolve to dist/: the core and the server start; the core alone', async () => {
  const name: string = 'decision-ledger'; // imported by the package's own name, as a user would
  const entry = await import(name) as typeof import('../../src/index.ts');
  const core = await import(`${name}/core`) as typeof import('../../src/core/index.ts');
  assert.equal(typeof entry.startServer, 'function');
  assert.equal(typeof entry.loadConfig, 'function');
  assert.equal(entry.canonicalJson, core.canonicalJson);
  assert.match(import.meta.resolve('decision-ledger'), /\/dist\/index\.js$/);
  const client = await import(`${name}/client`) as typeof import('../../src/client/index.ts');
  assert.equal(typeof client.LedgerClient, 'function');
  assert.match(import.meta.resolve(`${name}/client`), /\/dist\/client\/index\.js$/);
});

test('the compiled verifier thread starts its compiled worker and checks signatures on it', async () => {
  const { VerifierThread } = await compiled<typeof import('../../src/ledger/verifier-thread.ts')>('ledger/verifier-thread.js');
  const verifier = new VerifierThread().warmUp();
  try {
    await verifier.whenReady;
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'jwk' }).x!;
    const key = Buffer.from(raw, 'base64url');
    const signature = sign(null, Buffer.from('a decision', 'utf8'), privateKey);
    assert.deepEqual(await Promise.all([
      verifier.verify(key, 'a decision', signature),
      verifier.verify(key, 'another decision', signature),
    ]), [true, false]);
  } finally {
    await verifier.close();
  }
});

test('the compiled checkpointer runs a checkpoint on its worker', async () => {
  const { default: Database } = await compiled<typeof import('../../src/store/sqlite/driver.ts')>('store/sqlite/driver.js');
  const { Checkpointer } = await compiled<typeof import('../../src/store/sqlite/checkpointer.ts')>('store/sqlite/checkpointer.js');
  const path = join(dir, 'checkpoint.db');
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('wal_autocheckpoint = 0');
  db.exec('CREATE TABLE t (x); INSERT INTO t VALUES (1), (2), (3);');
  let restored = false;
  const checkpointer = new Checkpointer(path, () => { restored = true; }, { every: 1, drainAtFrames: 1_000_000 });
  try {
    checkpointer.afterAppend(1);
    await checkpointer.close();
    assert.equal(checkpointer.stats.runs, 1);
    assert.ok(checkpointer.active && !restored, 'the worker did not fail');
  } finally {
    db.close();
  }
});

test('the compiled `ledger verify` pool runs chunks on its workers', async () => {
  const { workerPool } = await compiled<typeof import('../../src/verify/pool.ts')>('verify/pool.js');
  const pool = workerPool(1);
  try {
    const result = await pool.run({ agent: 'nobody', keys: [], records: [], pins: [], requireContent: true });
    assert.equal(result.records, 0);
    assert.equal(result.failureCount, 0);
  } finally {
    await pool.close();
  }
});

/** A checkout in `root`: the real bin/ledger.js, a dist/ whose main only says it ran, built at `builtAt`, one source file changed at `changedAt` (seconds). */
function checkout(root: string, times: { builtAt: number; changedAt: number } | null): void {
  mkdirSync(join(root, 'bin'), { recursive: true });
  copyFileSync(fileURLToPath(new URL('../../bin/ledger.js', import.meta.url)), join(root, 'bin', 'ledger.js'));
  mkdirSync(join(root, 'src', 'api'), { recursive: true });
  writeFileSync(join(root, 'src', 'api', 'app.ts'), 'export {};\n');
  if (!times) return;
  mkdirSync(join(root, 'dist', 'cli'), { recursive: true });
  writeFileSync(join(root, 'dist', 'cli', 'main.js'), "console.log('dist ran');\n");
  writeFileSync(join(root, 'dist', '.tsbuildinfo'), '{}');
  utimesSync(join(root, 'dist', '.tsbuildinfo'), times.builtAt, times.builtAt);
  utimesSync(join(root, 'src', 'api', 'app.ts'), times.changedAt, times.changedAt);
}

test('`ledger` refuses a dist/ older than src/ (and a missing one) with one line saying to build; runs a fresh one', () => {
  const now = Math.floor(Date.now() / 1000);
  const run = (name: string, times: { builtAt: number; changedAt: number } | null) => {
    const root = join(dir, name);
    checkout(root, times);
    return spawnSync(process.execPath, [join(root, 'bin', 'ledger.js'), '--version'], { encoding: 'utf8', timeout: 30_000 });
  };
  const stale = run('stale', { builtAt: now - 60, changedAt: now });
  assert.equal(stale.status, 1);
  assert.equal(stale.stdout, '', 'the stale dist/ did not run');
  assert.equal(stale.stderr, 'ledger: dist/ is older than src/: run `npm run build` first\n');
  const missing = run('missing', null);
  assert.equal(missing.status, 1);
  assert.equal(missing.stderr, 'ledger: there is no dist/: run `npm run build` first\n');
  const fresh = run('fresh', { builtAt: now, changedAt: now - 60 });
  assert.equal(fresh.status, 0, fresh.stderr);
  assert.equal(fresh.stdout, 'dist ran\n');
});
