// Chain verification, canon_v1 §5 checks 1-5 (check 6, anchoring, lives with the Merkle log).
// Owns: recomputing a chain (or a page of one) from its records alone and saying exactly what
// differs. Signature maths is injected (SignatureVerifier) so this stays platform-free.

import { canonicalJson, utf8, type CanonValue } from './canon.ts';
import {
  CANON,
  GENESIS_PREV_HASH,
  chainHash,
  type RecordType,
  type SignatureEnvelope,
} from './chain.ts';
import { sha256Hex } from './sha256.ts';
import { isRecordedAt, parseRfc3339 } from './time.ts';

export type ChainRecord = {
  seq: number;
  id: string;
  type: RecordType;
  recorded_at: string;
  /** null when payloads were omitted */
  content: CanonValue | null;
  content_hash: string;
  prev_hash: string;
  chain_hash: string;
  signature?: SignatureEnvelope | null;
};

export type SignatureVerifier = (publicKeyB64url: string, message: Uint8Array, signatureB64url: string) => boolean;

export type KeyInfo = { id: string; public_key: string; revoked_at: string | null };

export type Check = {
  name: string;
  ok: boolean;
  detail?: string;
  seq?: number;
  id?: string;
  /** Summary checks only: how many records were checked, failed, or could not be checked. */
  counts?: { checked: number; failed: number; skipped: number };
};

export type VerifyResult = {
  ok: boolean;
  checks: Check[];
  failures: Check[];
  head: { seq: number; chain_hash: string } | null;
};

export const MAX_LISTED_FAILURES = 100;

/** Check names, in the order their summaries appear. */
export const CHECK_NAMES = ['seq', 'prev_hash', 'recorded_at', 'content_hash', 'content_envelope', 'chain_hash', 'signature'] as const;
type CheckName = (typeof CHECK_NAMES)[number];

const SUMMARY: { [K in CheckName]: string } = {
  seq: 'seq runs without gap',
  prev_hash: 'prev_hash links to the previous chain_hash',
  recorded_at: 'recorded_at well-formed and non-decreasing',
  content_hash: 'content re-serialises to content_hash',
  content_envelope: 'content carries canon_v1, the agent and the record type',
  chain_hash: 'chain entry re-serialises to chain_hash',
  signature: 'agent signatures verify under a key valid at recorded_at',
};

function describe(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

export function verifyChain(input: {
  agent: string;
  records: ChainRecord[];
  keys?: KeyInfo[];
  verifySignature?: SignatureVerifier;
  /** default: genesis (64 zeros); lets a verifier check a page that starts mid-chain */
  startPrevHash?: string;
  /** default 1 */
  startSeq?: number;
}): VerifyResult {
  const { agent, records, verifySignature } = input;
  const keys = new Map<string, KeyInfo>();
  for (const k of input.keys ?? []) keys.set(k.id, k);

  const counts = {} as { [K in CheckName]: { checked: number; failed: number; skipped: number } };
  for (const n of CHECK_NAMES) counts[n] = { checked: 0, failed: 0, skipped: 0 };
  const failures: Check[] = [];
  let totalFailures = 0;
  const fail = (name: CheckName, r: ChainRecord, detail: string): void => {
    counts[name].failed++;
    totalFailures++;
    if (failures.length < MAX_LISTED_FAILURES) failures.push({ name, ok: false, detail, seq: r.seq, id: r.id });
  };

  let expectedSeq = input.startSeq ?? 1;
  let expectedPrev = input.startPrevHash ?? GENESIS_PREV_HASH;
  let previousRecordedAt: string | null = null;
  let signaturesWithoutVerifier = 0;

  for (const r of records) {
    // 3. seq without gap; resynchronise after a gap so one gap is one failure.
    counts.seq.checked++;
    if (r.seq !== expectedSeq) fail('seq', r, `expected seq ${expectedSeq}, found ${r.seq}`);
    expectedSeq = (Number.isSafeInteger(r.seq) ? r.seq : expectedSeq) + 1;

    // 3. prev_hash is the previous record's (stated) chain_hash, so one altered record is
    // reported where it is, not again for every record after it.
    counts.prev_hash.checked++;
    if (r.prev_hash !== expectedPrev) {
      fail('prev_hash', r, `expected prev_hash ${expectedPrev} (chain_hash of the previous record), found ${r.prev_hash}`);
    }
    expectedPrev = r.chain_hash;

    // 4. recorded_at format and order (fixed-width UTC strings sort chronologically).
    counts.recorded_at.checked++;
    if (!isRecordedAt(r.recorded_at)) {
      fail('recorded_at', r, `recorded_at ${JSON.stringify(r.recorded_at)} is not a valid YYYY-MM-DDTHH:MM:SS.sssZ`);
    } else {
      if (previousRecordedAt !== null && r.recorded_at < previousRecordedAt) {
        fail('recorded_at', r, `recorded_at ${r.recorded_at} is before the previous record's ${previousRecordedAt}`);
      }
      previousRecordedAt = r.recorded_at;
    }

    // 1. content hash and envelope.
    let payload: string | null = null;
    if (r.content === null || r.content === undefined) {
      counts.content_hash.skipped++;
      counts.content_envelope.skipped++;
    } else {
      counts.content_hash.checked++;
      try {
        payload = canonicalJson(r.content);
      } catch (e) {
        fail('content_hash', r, `content cannot be serialised as canon_v1: ${describe(e)}`);
      }
      if (payload !== null) {
        const recomputed = sha256Hex(payload);
        if (recomputed !== r.content_hash) fail('content_hash', r, `expected content_hash ${recomputed}, found ${r.content_hash}`);
      }
      counts.content_envelope.checked++;
      const c = r.content;
      if (typeof c !== 'object' || c === null || Array.isArray(c)) {
        fail('content_envelope', r, 'content is not a JSON object');
      } else {
        const problems: string[] = [];
        if (c.canon !== CANON) problems.push(`canon is ${JSON.stringify(c.canon)}, expected "${CANON}"`);
        if (c.agent !== agent) problems.push(`agent is ${JSON.stringify(c.agent)}, expected ${JSON.stringify(agent)}`);
        if (c.type !== r.type) problems.push(`type is ${JSON.stringify(c.type)}, expected ${JSON.stringify(r.type)}`);
        if (problems.length > 0) fail('content_envelope', r, problems.join('; '));
      }
    }

    // 2. chain hash.
    counts.chain_hash.checked++;
    try {
      const recomputed = chainHash({
        agent,
        seq: r.seq,
        id: r.id,
        type: r.type,
        recordedAt: r.recorded_at,
        contentHash: r.content_hash,
        prevHash: r.prev_hash,
        signature: r.signature ?? null,
      });
      if (recomputed !== r.chain_hash) fail('chain_hash', r, `expected chain_hash ${recomputed}, found ${r.chain_hash}`);
    } catch (e) {
      fail('chain_hash', r, `chain entry cannot be serialised as canon_v1: ${describe(e)}`);
    }

    // 5. signature.
    const sig = r.signature;
    if (sig) {
      if (!verifySignature) {
        counts.signature.skipped++;
        signaturesWithoutVerifier++;
      } else if (payload === null) {
        counts.signature.skipped++;
      } else {
        counts.signature.checked++;
        const problem = checkSignature(r, sig, payload, keys, verifySignature);
        if (problem !== null) fail('signature', r, problem);
      }
    }
  }

  const checks: Check[] = CHECK_NAMES.map((name) => {
    const c = counts[name];
    let detail = `${SUMMARY[name]}: ${c.checked} checked, ${c.failed} failed`;
    if (name === 'signature' && signaturesWithoutVerifier > 0) {
      detail += `, ${signaturesWithoutVerifier} not checked (no signature verifier given)`;
      if (c.skipped > signaturesWithoutVerifier) detail += `, ${c.skipped - signaturesWithoutVerifier} not checked (payload omitted)`;
    } else if (c.skipped > 0) {
      detail += `, ${c.skipped} not checked (payload omitted)`;
    }
    return { name, ok: c.failed === 0, detail, counts: { ...c } };
  });

  if (totalFailures > failures.length) {
    failures.push({ name: 'more_failures', ok: false, detail: `and ${totalFailures - failures.length} more` });
  }

  const last = records.length > 0 ? records[records.length - 1] : undefined;
  return {
    ok: totalFailures === 0,
    checks,
    failures,
    head: last ? { seq: last.seq, chain_hash: last.chain_hash } : null,
  };
}

function checkSignature(
  r: ChainRecord,
  sig: SignatureEnvelope,
  payload: string,
  keys: Map<string, KeyInfo>,
  verify: SignatureVerifier,
): string | null {
  const content = r.content as { [key: string]: CanonValue };
  if (content.nonce !== sig.nonce) {
    return `signature nonce ${JSON.stringify(sig.nonce)} differs from the content's nonce ${JSON.stringify(content.nonce)}`;
  }
  const key = keys.get(sig.key_id);
  if (!key) return `signing key ${JSON.stringify(sig.key_id)} is not known`;
  if (key.revoked_at !== null && key.revoked_at !== undefined) {
    const revoked = parseRfc3339(key.revoked_at);
    const recorded = parseRfc3339(r.recorded_at);
    if (!revoked.ok) return `signing key ${key.id} has an unreadable revoked_at ${JSON.stringify(key.revoked_at)}`;
    if (!recorded.ok || revoked.epochMs < recorded.epochMs) {
      return `signing key ${key.id} was revoked at ${key.revoked_at}, before the record's recorded_at ${r.recorded_at}`;
    }
  }
  let valid = false;
  try {
    valid = verify(key.public_key, utf8(payload), sig.signature);
  } catch {
    valid = false;
  }
  return valid ? null : `Ed25519 signature does not verify over the content under key ${key.id}`;
}
