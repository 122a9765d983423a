// Shared by the witness tests: the reference's constructed keys (log seed 32×0x01, witness seed
// 32×0x02), histories of the log built with the core's MemoryTree and signed with the log key,
// add-checkpoint bodies, and an in-process witness (the real handler and SQLite state) on a port.
import { createServer, type Server } from 'node:http';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  b64Encode,
  consistencyProof,
  encodeCosignerVkey,
  encodeVkey,
  MemoryTree,
  signCheckpoint,
  type Hash,
  type LogResult,
} from '../../src/core/index.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { originsByHash, type Witness } from '../../src/witness/add-checkpoint.ts';
import { parseLogList } from '../../src/witness/log-list.ts';
import { SqliteWitnessState } from '../../src/witness/sqlite-state.ts';
import type { WitnessKey } from '../../src/witness/key.ts';
import { ed25519FromSeed, fromHex } from '../core/log-helpers.ts';

export const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors', 'witness');
export const vectors = JSON.parse(readFileSync(join(VECTORS, 'cosignature-v1.json'), 'utf8')) as {
  time: number;
  checkpoint_4: string;
  checkpoint_8: string;
  proof_4_8: string[];
  proof_6_8: string[];
  monitoring_suffix: string;
  log: { seed_hex: string; vkey: string };
  witness: { seed_hex: string; name: string; vkey: string };
};
export const vectorFile = (name: string) => readFileSync(join(VECTORS, name), 'utf8');

export const ORIGIN = 'ledger.example/log';
export const logKey = ed25519FromSeed(fromHex(vectors.log.seed_hex));
const witnessSeed = ed25519FromSeed(fromHex(vectors.witness.seed_hex));
export const witnessKey: WitnessKey = {
  name: vectors.witness.name,
  publicKey: witnessSeed.publicKey,
  vkey: value(encodeCosignerVkey(vectors.witness.name, witnessSeed.publicKey)),
  sign: witnessSeed.sign,
};

export function value<T>(r: LogResult<T>): T {
  if (!r.ok) throw new Error(r.error);
  return r.value;
}

/** The 8 RFC 6962 test leaves of the reference (tdm-reference-tree.json). */
export const RFC_LEAVES = ['', '00', '10', '2021', '3031', '40414243', '5051525354555657', '606162636465666768696a6b6c6d6e6f'].map(fromHex);

/** A history of the log: a Merkle tree of these leaf inputs. */
export function history(leaves: Uint8Array[]): MemoryTree {
  const tree = new MemoryTree();
  value(tree.appendData(leaves));
  return tree;
}

/** The signed checkpoint of the tree at size, by `key` (default the log key) named `origin`. */
export function checkpointOf(tree: MemoryTree, size: number, key = logKey, origin = ORIGIN): string {
  return value(signCheckpoint({ origin, size, root: value(tree.root(size)) }, key.publicKey, key.sign));
}

export function proofOf(tree: MemoryTree, from: number, to: number): string[] {
  if (from === 0 || from === to) return [];
  return value(consistencyProof(from, to, tree.read)).map((h: Hash) => b64Encode(h));
}

export function body(old: number, proof: string[], note: string): string {
  return `old ${old}\n${proof.map((p) => `${p}\n`).join('')}\n${note}`;
}

export function logList(...vkeys: string[]): string {
  return `logs/v0\n${vkeys.map((v) => `vkey ${v}\n`).join('')}`;
}

export const LOG_VKEY = value(encodeVkey(ORIGIN, logKey.publicKey));

/** A witness (the real handler and SQLite state in a fresh directory) listening on a free port. */
export async function startTestWitness(opts: { list?: string; now?: () => number; dir?: string; key?: WitnessKey; port?: number } = {}): Promise<{ url: string; dir: string; stop: () => Promise<void> }> {
  const { witnessHandler } = await import('../../src/witness/http.ts');
  const dir = opts.dir ?? mkdtempSync(join(tmpdir(), 'ledger-witness-'));
  const logs = value(parseLogList(opts.list ?? logList(LOG_VKEY)));
  const state = new SqliteWitnessState(join(dir, 'witness.db'));
  const w: Witness = { logs, key: opts.key ?? witnessKey, state, verify: verifyRaw, now: opts.now ?? (() => vectors.time), originsByHash: originsByHash(logs) };
  const handler = witnessHandler(w, '');
  const server: Server = createServer((req, res) => void handler(req, res));
  await new Promise<void>((r) => server.listen(opts.port ?? 0, '127.0.0.1', r));
  const port = (server.address() as { port: number }).port;
  return {
    url: `http://127.0.0.1:${port}`,
    dir,
    stop: () => new Promise<void>((r) => {
      server.close(() => {
        state.close();
        r();
      });
      server.closeAllConnections();
    }),
  };
}

/** A witness key of its own, from a one-byte seed (32 copies of it). */
export function seededWitnessKey(name: string, seedByte: number): WitnessKey {
  const seed = ed25519FromSeed(new Uint8Array(32).fill(seedByte));
  return { name, publicKey: seed.publicKey, vkey: value(encodeCosignerVkey(name, seed.publicKey)), sign: seed.sign };
}

export async function post(url: string, text: string | Uint8Array): Promise<{ status: number; type: string | null; body: string }> {
  const res = await fetch(`${url}/add-checkpoint`, { method: 'POST', body: typeof text === 'string' ? text : new Blob([new Uint8Array(text)]) });
  return { status: res.status, type: res.headers.get('content-type'), body: await res.text() };
}
