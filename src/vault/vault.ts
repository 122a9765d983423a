// The vault: every secret the service keeps (broker credentials, SnapTrade user secrets, webhook
// signing secrets) is stored sealed by it.
// It is responsible for sealing with AES-256-GCM under a versioned master key, the sealed format,
// the associated data that binds a sealed secret to its holder, re-sealing under a new key (`ledger
// master-key rotate`), and finding the master key (LEDGER_MASTER_KEY, LEDGER_MASTER_KEY_FILE, or
// one generated into the data directory, mode 0600). Its storage is port.ts; the start-time check
// of the keyring against the database is keyring-check.ts, the keyring loaded once is service.ts.
// Errors are values, and no error message ever holds key material, plaintext or ciphertext.
//
// Sealed format (ASCII): `v1.<key version>.<iv>.<ciphertext>.<tag>`, the last three base64url.
// The associated data names the holder (`sealedAad`), so a sealed secret copied to another holder
// does not open. A keyring holds every key version still in use; the highest version seals.
// Keyring text (env or file): one `<version>:<base64 key>` per line or comma-separated; a bare
// base64 key is version 1.

import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { link, open, readFile, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { SealedOwner } from './port.ts';

export const MASTER_KEY_BYTES = 32;
export const MASTER_KEY_FILE_NAME = 'master.key';
const FORMAT = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;

export type MasterKey = { version: number; key: Buffer };
/** Every key still needed to open stored secrets; `current` (the highest version) seals. */
export type Keyring = { current: MasterKey; all: ReadonlyMap<number, Buffer> };

export type VaultErrorCode =
  | 'master_key_invalid' //    the configured key is not base64 of 32 bytes, or the keyring text is malformed
  | 'master_key_unreadable' // the key file could not be read or created
  | 'sealed_malformed' //      not a sealed secret of this vault
  | 'unknown_key_version' //   sealed under a key this keyring does not hold
  | 'open_failed'; //          wrong key, wrong holder (associated data), or altered bytes (GCM refused)

export type VaultError = { code: VaultErrorCode; message: string };
export type VaultResult<T> = { ok: true; value: T } | { ok: false; error: VaultError };

const fail = (code: VaultErrorCode, message: string): { ok: false; error: VaultError } => ({ ok: false, error: { code, message } });

function decodeKey(b64: string): Buffer | null {
  const s = b64.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(s)) return null;
  const key = Buffer.from(s, s.includes('-') || s.includes('_') ? 'base64url' : 'base64');
  return key.length === MASTER_KEY_BYTES ? key : null;
}

/** Reads keyring text; messages name the entry by position, never by content. */
export function parseKeyring(text: string): VaultResult<Keyring> {
  const entries = text.split(/[\n,]/).map((s) => s.trim()).filter((s) => s !== '' && !s.startsWith('#'));
  if (entries.length === 0) return fail('master_key_invalid', 'the master key is empty');
  const all = new Map<number, Buffer>();
  for (let i = 0; i < entries.length; i++) {
    const entry = entries[i] as string;
    const m = /^(\d{1,9}):(.*)$/.exec(entry);
    const version = m ? Number(m[1]) : entries.length === 1 ? 1 : NaN;
    const key = decodeKey(m ? (m[2] as string) : entry);
    if (!Number.isSafeInteger(version) || version < 1) {
      return fail('master_key_invalid', `master key entry ${i + 1}: expected <version>:<base64 key>, version >= 1`);
    }
    if (key === null) return fail('master_key_invalid', `master key entry ${i + 1}: not base64 of exactly ${MASTER_KEY_BYTES} bytes`);
    if (all.has(version)) return fail('master_key_invalid', `master key version ${version} appears twice`);
    all.set(version, key);
  }
  const version = Math.max(...all.keys());
  return { ok: true, value: { current: { version, key: all.get(version) as Buffer }, all } };
}

/** Keyring text for a key file, highest version first. Holds key material: write it 0600. */
export function formatKeyring(ring: Keyring): string {
  return [...ring.all.entries()].sort((a, b) => b[0] - a[0]).map(([v, k]) => `${v}:${k.toString('base64')}`).join('\n') + '\n';
}

/** A keyring with a fresh key one version above the current, which seals from now on. */
export function addKeyVersion(ring: Keyring, key: Buffer = randomBytes(MASTER_KEY_BYTES)): Keyring {
  const version = Math.max(...ring.all.keys()) + 1;
  const all = new Map(ring.all);
  all.set(version, key);
  return { current: { version, key }, all };
}

/** The keyring without the versions no sealed secret uses any more (after a rotation). */
export function dropKeyVersions(ring: Keyring, keep: (version: number) => boolean): Keyring {
  const all = new Map([...ring.all].filter(([v]) => v === ring.current.version || keep(v)));
  return { current: ring.current, all };
}

/**
 * The associated data a secret of `owner` is sealed under: it opens for that holder only. Written
 * once here, so no two holders' associated data can meet (a connection's is its bare id).
 */
export function sealedAad(owner: SealedOwner, id: string): string {
  switch (owner) {
    case 'broker_connection': return id;
    case 'broker_user': return `snaptrade-user:${id}`;
    case 'webhook_endpoint': return `webhook:${id}`;
  }
}

function aadBytes(aad: string): Buffer {
  return Buffer.from(aad, 'utf8');
}

/** Seals `plaintext` for one holder (its associated data, `sealedAad`) under the keyring's current key. */
export function seal(ring: Keyring, aad: string, plaintext: string): string {
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', ring.current.key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aadBytes(aad));
  const ct = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return [FORMAT, String(ring.current.version), iv.toString('base64url'), ct.toString('base64url'), tag.toString('base64url')].join('.');
}

/** The key version a sealed secret names, or null when it is not a sealed secret. */
export function sealedKeyVersion(sealed: string): number | null {
  const m = /^v1\.(\d{1,9})\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]+$/.exec(sealed);
  return m ? Number(m[1]) : null;
}

/** Opens a sealed secret of the holder `aad` names with whichever key version sealed it. */
export function unseal(ring: Keyring, aad: string, sealed: string): VaultResult<string> {
  const version = typeof sealed === 'string' ? sealedKeyVersion(sealed) : null;
  if (version === null) return fail('sealed_malformed', 'not a sealed secret of this vault (format v1)');
  const key = ring.all.get(version);
  if (!key) return fail('unknown_key_version', `sealed under master key version ${version}, which the keyring does not hold`);
  const [, , ivText, ctText, tagText] = sealed.split('.') as [string, string, string, string, string];
  const iv = Buffer.from(ivText, 'base64url');
  const tag = Buffer.from(tagText, 'base64url');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) return fail('sealed_malformed', 'sealed secret has a wrong IV or tag length');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(aadBytes(aad));
    decipher.setAuthTag(tag);
    const pt = Buffer.concat([decipher.update(Buffer.from(ctText, 'base64url')), decipher.final()]);
    return { ok: true, value: pt.toString('utf8') };
  } catch {
    return fail('open_failed', `sealed secret did not open under key version ${version} for this connection (wrong key, wrong connection, or altered)`);
  }
}

/**
 * Re-seals under the keyring's current key, for rotation. A secret already under the current
 * version is returned unchanged (`changed: false`), so a rotation can be run again after a crash.
 */
export function reseal(ring: Keyring, aad: string, sealed: string): VaultResult<{ sealed: string; changed: boolean }> {
  if (sealedKeyVersion(sealed) === ring.current.version) {
    const check = unseal(ring, aad, sealed);
    return check.ok ? { ok: true, value: { sealed, changed: false } } : check;
  }
  const opened = unseal(ring, aad, sealed);
  if (!opened.ok) return opened;
  return { ok: true, value: { sealed: seal(ring, aad, opened.value), changed: true } };
}

export type MasterKeySource =
  | { kind: 'env' }
  | { kind: 'file'; path: string; /** the file is readable by group or others */ looseMode: boolean }
  | { kind: 'generated'; path: string };

/**
 * Finds the master keyring: LEDGER_MASTER_KEY (keyring text, usually one base64 key), else
 * LEDGER_MASTER_KEY_FILE, else `<dataDir>/master.key`, created with a fresh key (mode 0600) when
 * absent. A `generated`
 * source is the caller's cue to log once where the key is and that it must be backed up.
 */
export async function loadMasterKeyring(input: {
  env: { LEDGER_MASTER_KEY?: string | undefined; LEDGER_MASTER_KEY_FILE?: string | undefined };
  dataDir: string;
}): Promise<VaultResult<{ ring: Keyring; source: MasterKeySource }>> {
  const { env, dataDir } = input;
  if (env.LEDGER_MASTER_KEY !== undefined && env.LEDGER_MASTER_KEY !== '') {
    const r = parseKeyring(env.LEDGER_MASTER_KEY);
    if (!r.ok) return fail(r.error.code, `LEDGER_MASTER_KEY: ${r.error.message}`);
    return { ok: true, value: { ring: r.value, source: { kind: 'env' } } };
  }
  if (env.LEDGER_MASTER_KEY_FILE !== undefined && env.LEDGER_MASTER_KEY_FILE !== '') {
    return readKeyFile(env.LEDGER_MASTER_KEY_FILE, 'LEDGER_MASTER_KEY_FILE');
  }
  const path = join(dataDir, MASTER_KEY_FILE_NAME);
  const ring: Keyring = { current: { version: 1, key: randomBytes(MASTER_KEY_BYTES) }, all: new Map() };
  (ring.all as Map<number, Buffer>).set(1, ring.current.key);
  // Written whole to a private temporary file, then linked into place: link() refuses an existing
  // name, so of two processes starting together one creates the key and the other reads it, and
  // nobody ever reads a half-written file.
  const temp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  try {
    const handle = await open(temp, 'wx', 0o600);
    try {
      await handle.writeFile(formatKeyring(ring), 'utf8');
      await handle.sync();
    } finally {
      await handle.close();
    }
    await link(temp, path);
    return { ok: true, value: { ring, source: { kind: 'generated', path } } };
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'EEXIST') return readKeyFile(path, 'master key file');
    return fail('master_key_unreadable', `could not create the master key file ${path} (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  } finally {
    await unlink(temp).catch(() => {});
  }
}

async function readKeyFile(path: string, what: string): Promise<VaultResult<{ ring: Keyring; source: MasterKeySource }>> {
  let text: string;
  let mode: number;
  try {
    [text, mode] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mode)]);
  } catch (e) {
    return fail('master_key_unreadable', `${what} ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const r = parseKeyring(text);
  if (!r.ok) return fail(r.error.code, `${what} ${path}: ${r.error.message}`);
  return { ok: true, value: { ring: r.value, source: { kind: 'file', path, looseMode: (mode & 0o077) !== 0 } } };
}
