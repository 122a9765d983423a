// The key file `ledger mcp` signs with: one JSON object holding the agent's handle, the registered
// key id, and the Ed25519 key pair (private key base64url). Written once with mode 0600 and never
// overwritten; a file others can read is refused, as ssh refuses a private key anyone can read.
import { closeSync, openSync, readFileSync, statSync, unlinkSync, writeSync } from 'node:fs';
import { LedgerClient, generateSigningKey, publicKeyOf, secretKeyFromText, secretKeyToText, type Signer } from '../client/index.ts';

export type KeyFile = { object: 'signing_key_file'; agent: string; key_id: string; public_key: string; secret_key: string };

export class KeyFileError extends Error {}

/** The signer a key file holds; checks it is private to its owner and that its halves match. */
export async function readKeyFile(path: string): Promise<Signer> {
  let text: string;
  try {
    if (process.platform !== 'win32' && (statSync(path).mode & 0o077) !== 0) {
      throw new KeyFileError(`${path} can be read by others: chmod 600 ${path}`);
    }
    text = readFileSync(path, 'utf8');
  } catch (e) {
    if (e instanceof KeyFileError) throw e;
    throw new KeyFileError(`cannot read the key file ${path}: ${(e as Error).message}`);
  }
  let file: Partial<KeyFile>;
  try {
    file = JSON.parse(text) as Partial<KeyFile>;
  } catch {
    throw new KeyFileError(`${path} is not JSON`);
  }
  if (file.object !== 'signing_key_file' || typeof file.agent !== 'string' || typeof file.key_id !== 'string' || typeof file.secret_key !== 'string') {
    throw new KeyFileError(`${path} is not a signing key file ({"object":"signing_key_file","agent","key_id","public_key","secret_key"})`);
  }
  let secretKey: Uint8Array;
  try {
    secretKey = secretKeyFromText(file.secret_key);
  } catch (e) {
    throw new KeyFileError(`${path}: secret_key: ${(e as Error).message}`);
  }
  if (file.public_key !== undefined && (await publicKeyOf(secretKey)) !== file.public_key) {
    throw new KeyFileError(`${path}: public_key is not the public half of secret_key`);
  }
  return { agent: file.agent, keyId: file.key_id, secretKey };
}

/** Makes a key pair, registers its public half with the service, and writes the key file (0600, never over an existing file). */
export async function createKeyFile(path: string, options: { client: LedgerClient; agent: string; label: string }): Promise<KeyFile> {
  const pair = await generateSigningKey();
  let fd: number;
  try {
    fd = openSync(path, 'wx', 0o600); // fails when the file exists: a private key is never overwritten
  } catch (e) {
    throw new KeyFileError(`cannot create ${path}: ${(e as Error).message}`);
  }
  try {
    const key = await options.client.registerSigningKey(pair.publicKey, options.label);
    const file: KeyFile = { object: 'signing_key_file', agent: options.agent, key_id: key.id, public_key: pair.publicKey, secret_key: secretKeyToText(pair.secretKey) };
    writeSync(fd, JSON.stringify(file, null, 2) + '\n');
    closeSync(fd);
    return file;
  } catch (e) {
    closeSync(fd);
    unlinkSync(path);
    throw e;
  }
}
