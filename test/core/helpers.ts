// Shared by the core tests: vector loading, an Ed25519 SignatureVerifier on node:crypto, and a
// chain builder for tamper tests.
import { createPublicKey, verify } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  b64urlDecode,
  b64urlEncode,
  canonicalJson,
  chainHash,
  contentHash,
  utf8,
  type CanonValue,
  type ChainRecord,
  type SignatureEnvelope,
  type SignatureVerifier,
} from '../../src/core/index.ts';

ed.hashes.sha512 = sha512;

const VECTORS = join(dirname(fileURLToPath(import.meta.url)), '..', 'vectors', 'canon_v1');

export function loadVectors<T>(name: string): T {
  return JSON.parse(readFileSync(join(VECTORS, name), 'utf8')) as T;
}

export type Keypair = { key_id: string; seed_hex: string; public_key_hex: string; public_key_b64url: string };
export const keypair = loadVectors<Keypair>('keypair.json');
export const seed = new Uint8Array(Buffer.from(keypair.seed_hex, 'hex'));

const SPKI_ED25519_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');

/** The SignatureVerifier a Node verifier would use: node:crypto Ed25519 over a raw 32-byte key. */
export const nodeVerifier: SignatureVerifier = (publicKeyB64url, message, signatureB64url) => {
  const raw = b64urlDecode(publicKeyB64url);
  const sig = b64urlDecode(signatureB64url);
  if (!raw || raw.length !== 32 || !sig || sig.length !== 64) return false;
  const key = createPublicKey({ key: Buffer.concat([SPKI_ED25519_PREFIX, raw]), format: 'der', type: 'spki' });
  return verify(null, message, key, sig);
};

export function signB64url(payload: string, secret: Uint8Array = seed): string {
  return b64urlEncode(ed.sign(utf8(payload), secret));
}

export function publicKeyB64url(secret: Uint8Array): string {
  return b64urlEncode(ed.getPublicKey(secret));
}

export type DraftRecord = {
  id: string;
  type: 'decision' | 'execution';
  recorded_at: string;
  content: CanonValue;
  sign?: { key_id: string; nonce: string; secret?: Uint8Array };
};

/** Builds a consistent chain (every hash right) from drafts. */
export function buildChain(agent: string, drafts: DraftRecord[], startSeq = 1, startPrev = '0'.repeat(64)): ChainRecord[] {
  const out: ChainRecord[] = [];
  let prev = startPrev;
  drafts.forEach((d, i) => {
    const seq = startSeq + i;
    const ch = contentHash(d.content);
    const signature: SignatureEnvelope | null = d.sign
      ? { key_id: d.sign.key_id, nonce: d.sign.nonce, signature: signB64url(canonicalJson(d.content), d.sign.secret) }
      : null;
    const hash = chainHash({ agent, seq, id: d.id, type: d.type, recordedAt: d.recorded_at, contentHash: ch, prevHash: prev, signature });
    const rec: ChainRecord = { seq, id: d.id, type: d.type, recorded_at: d.recorded_at, content: d.content, content_hash: ch, prev_hash: prev, chain_hash: hash };
    if (signature) rec.signature = signature;
    out.push(rec);
    prev = hash;
  });
  return out;
}

/** Recomputes chain hashes and links after records were edited (a forger who re-hashes). */
export function rehash(agent: string, records: ChainRecord[], startPrev = '0'.repeat(64)): ChainRecord[] {
  let prev = startPrev;
  return records.map((r) => {
    const content_hash = r.content === null ? r.content_hash : contentHash(r.content);
    const chain_hash = chainHash({
      agent, seq: r.seq, id: r.id, type: r.type, recordedAt: r.recorded_at, contentHash: content_hash, prevHash: prev, signature: r.signature ?? null,
    });
    const out = { ...r, content_hash, prev_hash: prev, chain_hash };
    prev = chain_hash;
    return out;
  });
}

export function clone<T>(v: T): T {
  return structuredClone(v);
}
