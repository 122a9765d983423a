// Verifying OpenTimestamps proofs against Bitcoin block headers (log_v1 §5 and §6 step 5,
// reference/tamper-evidence a.13). It is responsible for reading an 80-byte header, checking that a
// BitcoinBlockHeaderAttestation's message is that header's merkle root, and walking a whole
// `.ots` file to say which attestations are confirmed, pending, or wrong. Where headers come from is
// injected (HeaderLookup), so an own node, a header chain or an Esplora server all fit.

import { createHash } from 'node:crypto';
import {
  attestedMessages,
  equalBytes,
  toHex,
  type DetachedTimestampFile,
  type Op,
  type Result,
} from './codec.ts';

export const HEADER_LENGTH = 80;

export type BlockHeader = {
  version: number;
  /** display order (reversed), as explorers print it */
  prevBlockHash: string;
  /** serialisation order, as the attestation's message is */
  merkleRoot: Uint8Array;
  /** display order */
  merkleRootHex: string;
  /** nTime, UNIX seconds */
  time: number;
  bits: number;
  nonce: number;
  /** display order: double SHA-256 of the header, reversed */
  hash: string;
};

export function parseBlockHeader(header: Uint8Array): Result<BlockHeader, string> {
  if (header.length !== HEADER_LENGTH) return { ok: false, error: `a block header is 80 bytes, not ${header.length}` };
  const view = new DataView(header.buffer, header.byteOffset, header.length);
  const merkleRoot = header.slice(36, 68);
  return {
    ok: true,
    value: {
      version: view.getInt32(0, true),
      prevBlockHash: reversedHex(header.subarray(4, 36)),
      merkleRoot,
      merkleRootHex: reversedHex(merkleRoot),
      time: view.getUint32(68, true),
      bits: view.getUint32(72, true),
      nonce: view.getUint32(76, true),
      hash: blockHash(header),
    },
  };
}

/** Double SHA-256 of the header, reversed hex: the block hash explorers and nodes name. */
export function blockHash(header: Uint8Array): string {
  const once = createHash('sha256').update(header).digest();
  return reversedHex(createHash('sha256').update(once).digest());
}

/**
 * Whether the header's hash is at or under the target its own nBits sets. Cheap evidence of work; it
 * does not show the header is on the best chain (that is the header source's job).
 */
export function meetsOwnTarget(h: BlockHeader): boolean {
  const exponent = h.bits >>> 24;
  const mantissa = BigInt(h.bits & 0x007fffff);
  if (h.bits & 0x00800000 || mantissa === 0n) return false;
  const target = exponent <= 3 ? mantissa >> BigInt(8 * (3 - exponent)) : mantissa << BigInt(8 * (exponent - 3));
  return BigInt('0x' + h.hash) <= target;
}

export type BitcoinConfirmation = {
  height: number;
  blockHash: string;
  /** display order */
  merkleRoot: string;
  /** the header's nTime: the data existed before this, give or take an hour or two */
  time: number;
  attestedAt: string;
};

export type AttestationFailure =
  | { kind: 'bad_header'; height: number; message: string }
  | { kind: 'merkle_root_mismatch'; height: number; expected: string; actual: string }
  | { kind: 'insufficient_work'; height: number; blockHash: string };

/** Checks one BitcoinBlockHeaderAttestation(height): its message must be the header's merkle root. */
export function verifyBitcoinAttestation(message: Uint8Array, height: number, header: Uint8Array): Result<BitcoinConfirmation, AttestationFailure> {
  const parsed = parseBlockHeader(header);
  if (!parsed.ok) return { ok: false, error: { kind: 'bad_header', height, message: parsed.error } };
  const h = parsed.value;
  if (!equalBytes(message, h.merkleRoot)) {
    return { ok: false, error: { kind: 'merkle_root_mismatch', height, expected: h.merkleRootHex, actual: message.length === 32 ? reversedHex(message) : toHex(message) } };
  }
  if (!meetsOwnTarget(h)) return { ok: false, error: { kind: 'insufficient_work', height, blockHash: h.hash } };
  return {
    ok: true,
    value: { height, blockHash: h.hash, merkleRoot: h.merkleRootHex, time: h.time, attestedAt: new Date(h.time * 1000).toISOString() },
  };
}

export type HeaderError = { kind: string; message: string };
/** The 80-byte header of the block at this height on the chain the caller trusts. */
export type HeaderLookup = (height: number) => Promise<Result<Uint8Array, HeaderError>>;

export type FileVerification = {
  /** at least one Bitcoin attestation verified and none failed */
  ok: boolean;
  digestMatches: boolean | null;
  confirmed: BitcoinConfirmation[];
  failed: AttestationFailure[];
  /** headers that could not be fetched: neither confirmed nor failed */
  unavailable: Array<{ height: number; error: HeaderError }>;
  pending: Array<{ uri: string; commitment: string }>;
  /** other attestations (other chains, unknown tags) and branches that cannot be replayed here */
  unchecked: Array<{ what: string; path: Op[] }>;
};

/**
 * Replays a `.ots` file from its digest and checks each Bitcoin attestation against the header at
 * its height. With `expectedDigest` (e.g. SHA-256 of a checkpoint body) the file must be for it.
 */
export async function verifyDetachedFile(file: DetachedTimestampFile, headerAt: HeaderLookup, expectedDigest?: Uint8Array): Promise<FileVerification> {
  const replay = attestedMessages(file.timestamp, file.digest);
  const out: FileVerification = {
    ok: false,
    digestMatches: expectedDigest ? equalBytes(expectedDigest, file.digest) : null,
    confirmed: [],
    failed: [],
    unavailable: [],
    pending: [],
    unchecked: replay.skipped.map((s) => ({ what: s.error.message, path: s.path })),
  };
  for (const { attestation, message, path } of replay.attested) {
    if (attestation.kind === 'pending') out.pending.push({ uri: attestation.uri, commitment: toHex(message) });
    else if (attestation.kind === 'unknown') out.unchecked.push({ what: `attestation ${toHex(attestation.tag)}`, path });
    else {
      const header = await headerAt(attestation.height);
      if (!header.ok) out.unavailable.push({ height: attestation.height, error: header.error });
      else {
        const checked = verifyBitcoinAttestation(message, attestation.height, header.value);
        if (checked.ok) out.confirmed.push(checked.value);
        else out.failed.push(checked.error);
      }
    }
  }
  out.ok = out.digestMatches !== false && out.failed.length === 0 && out.confirmed.length > 0;
  return out;
}

function reversedHex(b: Uint8Array): string {
  return toHex(b.slice().reverse());
}
