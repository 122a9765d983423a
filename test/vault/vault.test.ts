// Credentials vault: sealing, associated data, key versions, rotation, master key loading.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile, chmod } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import {
  MASTER_KEY_FILE_NAME, addKeyVersion, dropKeyVersions, formatKeyring, loadMasterKeyring, parseKeyring, reseal, seal, sealedKeyVersion, unseal,
  type Keyring, type VaultError,
} from '../../src/vault/vault.ts';

const SECRET = 'alpaca-secret-key-9f8e7d6c5b4a39281706';
const dirs: string[] = [];
after(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});
async function tempDir(): Promise<string> {
  const d = await mkdtemp(join(tmpdir(), 'vault-test-'));
  dirs.push(d);
  return d;
}

function ring(text = randomBytes(32).toString('base64')): Keyring {
  const r = parseKeyring(text);
  assert.ok(r.ok);
  return r.value;
}

/** Every error must be free of key material, plaintext and ciphertext. */
function assertClean(e: VaultError, forbidden: string[]): void {
  const text = JSON.stringify(e);
  for (const f of forbidden) assert.ok(!text.includes(f), `error holds secret material: ${text}`);
}

describe('seal and unseal', () => {
  it('round-trips and carries its key version', () => {
    const k = ring();
    const sealed = seal(k, 'brk_1', SECRET);
    assert.match(sealed, /^v1\.1\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+$/);
    assert.equal(sealedKeyVersion(sealed), 1);
    assert.ok(!sealed.includes(SECRET));
    assert.deepEqual(unseal(k, 'brk_1', sealed), { ok: true, value: SECRET });
    assert.notEqual(seal(k, 'brk_1', SECRET), sealed, 'a fresh IV each time');
  });

  it('does not open for another connection id (associated data)', () => {
    const k = ring();
    const sealed = seal(k, 'brk_1', SECRET);
    const r = unseal(k, 'brk_2', sealed);
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'open_failed');
    assertClean(r.error, [SECRET, sealed, k.current.key.toString('base64')]);
  });

  it('does not open under another key, or with the version field altered', () => {
    const a = ring();
    const b = ring();
    const sealed = seal(a, 'brk_1', SECRET);
    const wrongKey = unseal(b, 'brk_1', sealed);
    assert.ok(!wrongKey.ok && wrongKey.error.code === 'open_failed');
    const two = addKeyVersion(a);
    const relabelled = sealed.replace(/^v1\.1\./, 'v1.2.');
    const wrongVersion = unseal(two, 'brk_1', relabelled);
    assert.ok(!wrongVersion.ok && wrongVersion.error.code === 'open_failed');
    const unknown = unseal(a, 'brk_1', sealed.replace(/^v1\.1\./, 'v1.9.'));
    assert.ok(!unknown.ok && unknown.error.code === 'unknown_key_version');
  });

  it('refuses altered bytes and malformed input', () => {
    const k = ring();
    const sealed = seal(k, 'brk_1', SECRET);
    const parts = sealed.split('.');
    const ct = Buffer.from(parts[3]!, 'base64url');
    ct[0]! ^= 1;
    parts[3] = ct.toString('base64url');
    const flipped = unseal(k, 'brk_1', parts.join('.'));
    assert.ok(!flipped.ok && flipped.error.code === 'open_failed');
    for (const bad of ['', 'v2.1.a.b.c', 'v1.1.a.b', `v1.1.${'A'.repeat(8)}.b.${'A'.repeat(22)}`, SECRET]) {
      const r = unseal(k, 'brk_1', bad);
      assert.ok(!r.ok, bad);
      assert.equal(r.error.code, 'sealed_malformed');
      assertClean(r.error, [SECRET]);
    }
  });
});

describe('rotation', () => {
  it('re-seals under the new version, keeps old ones openable until dropped, and is idempotent', () => {
    const v1 = ring();
    const sealed = [seal(v1, 'brk_1', SECRET), seal(v1, 'brk_2', 'other-secret')];
    const v2 = addKeyVersion(v1);
    assert.equal(v2.current.version, 2);
    assert.deepEqual(unseal(v2, 'brk_1', sealed[0]!), { ok: true, value: SECRET }, 'old secrets open during the rotation');
    const rotated = sealed.map((s, i) => reseal(v2, `brk_${i + 1}`, s));
    for (const r of rotated) assert.ok(r.ok && r.value.changed && sealedKeyVersion(r.value.sealed) === 2);
    const again = reseal(v2, 'brk_1', (rotated[0] as { ok: true; value: { sealed: string } }).value.sealed);
    assert.ok(again.ok && !again.value.changed);
    const onlyV2 = dropKeyVersions(v2, () => false);
    assert.deepEqual([...onlyV2.all.keys()], [2]);
    assert.deepEqual(unseal(onlyV2, 'brk_2', (rotated[1] as { ok: true; value: { sealed: string } }).value.sealed), { ok: true, value: 'other-secret' });
    const stale = unseal(onlyV2, 'brk_1', sealed[0]!);
    assert.ok(!stale.ok && stale.error.code === 'unknown_key_version');
  });

  it('a secret sealed for one connection is not re-sealed for another', () => {
    const v2 = addKeyVersion(ring());
    const r = reseal(v2, 'brk_2', seal(v2, 'brk_1', SECRET));
    assert.ok(!r.ok && r.error.code === 'open_failed');
  });

  it('keyring text round-trips, highest version current', () => {
    const v3 = addKeyVersion(addKeyVersion(ring()));
    const text = formatKeyring(v3);
    assert.match(text, /^3:[A-Za-z0-9+/=]+\n2:[A-Za-z0-9+/=]+\n1:[A-Za-z0-9+/=]+\n$/);
    const back = parseKeyring(text);
    assert.ok(back.ok);
    assert.equal(back.value.current.version, 3);
    assert.ok(back.value.current.key.equals(v3.current.key));
    const commas = parseKeyring(text.trim().split('\n').join(','));
    assert.ok(commas.ok && commas.value.all.size === 3);
  });

  it('refuses malformed keyrings without echoing them', () => {
    const key = randomBytes(32).toString('base64');
    const short = randomBytes(16).toString('base64');
    for (const bad of ['', short, `1:${key},1:${key}`, `0:${key}`, `x:${key}`, `${key},${key}`, 'not base64 !!']) {
      const r = parseKeyring(bad);
      assert.ok(!r.ok, bad);
      assert.equal(r.error.code, 'master_key_invalid');
      assertClean(r.error, [key, short].filter((s) => bad.includes(s)));
    }
    assert.ok(parseKeyring(randomBytes(32).toString('base64url')).ok, 'base64url accepted');
  });
});

describe('loadMasterKeyring', () => {
  it('LEDGER_MASTER_KEY wins', async () => {
    const key = randomBytes(32).toString('base64');
    const r = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY: key, LEDGER_MASTER_KEY_FILE: '/nonexistent' }, dataDir: '/nonexistent' });
    assert.ok(r.ok);
    assert.deepEqual(r.value.source, { kind: 'env' });
    assert.equal(r.value.ring.current.key.toString('base64'), key);
  });

  it('an invalid LEDGER_MASTER_KEY is an error that does not echo it', async () => {
    const bad = randomBytes(31).toString('base64');
    const r = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY: bad }, dataDir: '/nonexistent' });
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'master_key_invalid');
    assert.match(r.error.message, /^LEDGER_MASTER_KEY: /);
    assertClean(r.error, [bad]);
  });

  it('LEDGER_MASTER_KEY_FILE is read, and a loose mode is reported', async () => {
    const dir = await tempDir();
    const path = join(dir, 'key');
    const text = formatKeyring(addKeyVersion(ring()));
    await writeFile(path, text, { mode: 0o600 });
    const r = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY_FILE: path }, dataDir: dir });
    assert.ok(r.ok);
    assert.deepEqual(r.value.source, { kind: 'file', path, looseMode: false });
    assert.equal(r.value.ring.current.version, 2);
    await chmod(path, 0o644);
    const loose = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY_FILE: path }, dataDir: dir });
    assert.ok(loose.ok && loose.value.source.kind === 'file' && loose.value.source.looseMode);
    const missing = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY_FILE: join(dir, 'absent') }, dataDir: dir });
    assert.ok(!missing.ok && missing.error.code === 'master_key_unreadable');
  });

  it('with neither, generates a key into the data directory once (mode 0600) and reuses it', async () => {
    const dir = await tempDir();
    const first = await loadMasterKeyring({ env: {}, dataDir: dir });
    assert.ok(first.ok);
    const path = join(dir, MASTER_KEY_FILE_NAME);
    assert.deepEqual(first.value.source, { kind: 'generated', path });
    assert.equal((await stat(path)).mode & 0o777, 0o600);
    const second = await loadMasterKeyring({ env: { LEDGER_MASTER_KEY: '' }, dataDir: dir });
    assert.ok(second.ok);
    assert.equal(second.value.source.kind, 'file');
    assert.ok(second.value.ring.current.key.equals(first.value.ring.current.key));
    const sealed = seal(first.value.ring, 'brk_1', SECRET);
    assert.deepEqual(unseal(second.value.ring, 'brk_1', sealed), { ok: true, value: SECRET });
    assert.match(await readFile(path, 'utf8'), /^1:[A-Za-z0-9+/=]{44}\n$/);
  });

  it('two processes starting together end with one key', async () => {
    const dir = await tempDir();
    const [a, b] = await Promise.all([loadMasterKeyring({ env: {}, dataDir: dir }), loadMasterKeyring({ env: {}, dataDir: dir })]);
    assert.ok(a.ok && b.ok);
    assert.ok(a.value.ring.current.key.equals(b.value.ring.current.key));
    assert.deepEqual([a.value.source.kind, b.value.source.kind].sort(), ['file', 'generated']);
  });

  it('an unwritable data directory is an error value', async () => {
    const r = await loadMasterKeyring({ env: {}, dataDir: '/nonexistent/dir' });
    assert.ok(!r.ok);
    assert.equal(r.error.code, 'master_key_unreadable');
  });
});
