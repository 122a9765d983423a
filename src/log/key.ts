// The global log's signing key (log_v1 §2): an Ed25519 key, read from LEDGER_LOG_KEY_FILE or, on
// first start without one, generated into the data directory (mode 0600). The file is PKCS#8
// PEM, what `openssl genpkey -algorithm ed25519` writes. Its name in notes is the log's origin.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { readFile, stat } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { encodeVkey, isKeyName, type Ed25519Sign } from '../core/note.ts';
import { createKeyFileOnce } from '../runtime/key-file.ts';

export const LOG_KEY_FILE_NAME = 'log-key.pem';

export type LogKey = {
  /** The key name in signatures: the log's origin. */
  origin: string;
  publicKey: Uint8Array;
  vkey: string;
  sign: Ed25519Sign;
};

export type LogKeySource = { kind: 'file'; path: string; looseMode: boolean } | { kind: 'generated'; path: string };

export type KeyResult<T> = { ok: true; value: T } | { ok: false; error: string };

/** Where a key is generated when none is configured: beside a SQLite database, else ./data. */
export function dataDirOf(databaseUrl: string): string {
  if (databaseUrl.startsWith('sqlite:') && databaseUrl !== 'sqlite::memory:') return dirname(databaseUrl.slice('sqlite:'.length));
  return 'data';
}

function logKeyFrom(privateKey: KeyObject, origin: string): KeyResult<LogKey> {
  if (privateKey.asymmetricKeyType !== 'ed25519') return { ok: false, error: `the log key must be Ed25519, not ${privateKey.asymmetricKeyType}` };
  if (!isKeyName(origin)) return { ok: false, error: `the log origin ${JSON.stringify(origin)} is not a valid note key name (no spaces, no +)` };
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  const vkey = encodeVkey(origin, publicKey);
  if (!vkey.ok) return vkey;
  return {
    ok: true,
    value: { origin, publicKey, vkey: vkey.value, sign: (message) => new Uint8Array(sign(null, message, privateKey)) },
  };
}

/** A log key from PKCS#8 PEM text. */
export function parseLogKey(pem: string, origin: string): KeyResult<LogKey> {
  let key: KeyObject;
  try {
    key = createPrivateKey({ key: pem, format: 'pem' });
  } catch (e) {
    return { ok: false, error: `not a PEM private key (${(e as Error).message})` };
  }
  return logKeyFrom(key, origin);
}

async function readKeyFile(path: string, origin: string): Promise<KeyResult<{ key: LogKey; looseMode: boolean }>> {
  let text: string;
  let mode: number;
  try {
    [text, mode] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mode)]);
  } catch (e) {
    return { ok: false, error: `the log key file ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})` };
  }
  const key = parseLogKey(text, origin);
  if (!key.ok) return { ok: false, error: `the log key file ${path}: ${key.error}` };
  return { ok: true, value: { key: key.value, looseMode: (mode & 0o077) !== 0 } };
}

/**
 * The log key: `keyFile` when given, else `<dataDir>/log-key.pem`, created with a fresh key
 * (mode 0600) when absent. A `generated` source is the caller's cue to log it once.
 */
export async function loadLogKey(input: { keyFile: string | null; dataDir: string; origin: string }): Promise<KeyResult<{ key: LogKey; source: LogKeySource }>> {
  const { keyFile, dataDir, origin } = input;
  if (keyFile) {
    const r = await readKeyFile(keyFile, origin);
    return r.ok ? { ok: true, value: { key: r.value.key, source: { kind: 'file', path: keyFile, looseMode: r.value.looseMode } } } : r;
  }
  const path = join(dataDir, LOG_KEY_FILE_NAME);
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const written = await createKeyFileOnce(path, pem);
  if (written === 'exists') {
    const r = await readKeyFile(path, origin);
    return r.ok ? { ok: true, value: { key: r.value.key, source: { kind: 'file', path, looseMode: r.value.looseMode } } } : r;
  }
  if (written !== 'created') return { ok: false, error: `could not create the log key file ${path} (${written.code})` };
  const key = parseLogKey(pem, origin);
  return key.ok ? { ok: true, value: { key: key.value, source: { kind: 'generated', path } } } : key;
}
