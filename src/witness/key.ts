// The witness's own Ed25519 key: `<data>/witness-key.pem` (PKCS#8 PEM, mode 0600), generated on
// first start. Its name in cosignature lines is the witness name; its vkey is a cosignature/v1
// (0x04) vkey. Created once (runtime/key-file.ts) and read back.
import { createPrivateKey, createPublicKey, generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { encodeCosignerVkey } from '../core/cosignature.ts';
import { isKeyName, type Ed25519Sign } from '../core/note.ts';
import { createKeyFileOnce } from '../runtime/key-file.ts';

export const WITNESS_KEY_FILE_NAME = 'witness-key.pem';

export type WitnessKey = { name: string; publicKey: Uint8Array; vkey: string; sign: Ed25519Sign };

export type KeyResult<T> = { ok: true; value: T } | { ok: false; error: string };

function witnessKeyFrom(privateKey: KeyObject, name: string): KeyResult<WitnessKey> {
  if (privateKey.asymmetricKeyType !== 'ed25519') return { ok: false, error: `the witness key must be Ed25519, not ${privateKey.asymmetricKeyType}` };
  if (!isKeyName(name)) return { ok: false, error: `the witness name ${JSON.stringify(name)} is not a valid key name (no spaces, no +)` };
  const spki = createPublicKey(privateKey).export({ format: 'der', type: 'spki' });
  const publicKey = new Uint8Array(spki.subarray(spki.length - 32));
  const vkey = encodeCosignerVkey(name, publicKey);
  if (!vkey.ok) return vkey;
  return { ok: true, value: { name, publicKey, vkey: vkey.value, sign: (m) => new Uint8Array(sign(null, m, privateKey)) } };
}

async function readKey(path: string, name: string): Promise<KeyResult<{ key: WitnessKey; looseMode: boolean }>> {
  try {
    const [pem, mode] = await Promise.all([readFile(path, 'utf8'), stat(path).then((s) => s.mode)]);
    const key = witnessKeyFrom(createPrivateKey({ key: pem, format: 'pem' }), name);
    if (!key.ok) return { ok: false, error: `${path}: ${key.error}` };
    return { ok: true, value: { key: key.value, looseMode: (mode & 0o077) !== 0 } };
  } catch (e) {
    return { ok: false, error: `the witness key file ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})` };
  }
}

/** The witness key in dataDir, created (mode 0600, fsynced) when absent; `created` says which. */
export async function loadWitnessKey(dataDir: string, name: string): Promise<KeyResult<{ key: WitnessKey; path: string; created: boolean; looseMode: boolean }>> {
  const path = join(dataDir, WITNESS_KEY_FILE_NAME);
  if (!isKeyName(name)) return { ok: false, error: `the witness name ${JSON.stringify(name)} is not a valid key name (no spaces, no +)` };
  mkdirSync(dataDir, { recursive: true, mode: 0o700 });
  const existing = await readKey(path, name);
  if (existing.ok) return { ok: true, value: { ...existing.value, path, created: false } };
  const pem = generateKeyPairSync('ed25519').privateKey.export({ format: 'pem', type: 'pkcs8' }) as string;
  const written = await createKeyFileOnce(path, pem);
  if (written === 'exists') {
    const other = await readKey(path, name);
    return other.ok ? { ok: true, value: { ...other.value, path, created: false } } : other;
  }
  if (written !== 'created') return { ok: false, error: `could not create the witness key file ${path} (${written.code})` };
  const key = witnessKeyFrom(createPrivateKey({ key: pem, format: 'pem' }), name);
  return key.ok ? { ok: true, value: { key: key.value, path, created: true, looseMode: false } } : key;
}
