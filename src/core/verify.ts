// Chain verification, canon_v1 §5 checks 1-5 (check 6, anchoring, lives with the Merkle log).
// It is responsible for recomputing a chain (or a page of one) from its records alone and saying
// exactly what differs. Signature maths is injected (SignatureVerifier) so this stays
// platform-free.

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

type Counts = { checked: number; failed: number; skipped: number };

/** The state of one walk along a chain: what the next record must link to, and the tallies. */
class ChainWalk {
  readonly counts = Object.fromEntries(CHECK_NAMES.map((n) => [n, { checked: 0, failed: 0, skipped: 0 }])) as { [K in CheckName]: Counts };
  readonly failures: Check[] = [];
  totalFailures = 0;
  signaturesWithoutVerifier = 0;
  previousRecordedAt: string | null = null;

  constructor(public expectedSeq: number, public expectedPrev: string) {}

  fail(name: CheckName, r: ChainRecord, detail: string): void {
    this.counts[name].failed++;
    this.totalFailures++;
    if (this.failures.length < MAX_LISTED_FAILURES) this.failures.push({ name, ok: false, detail, seq: r.seq, id: r.id });
  }
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
  const keys = new Map<string, KeyInfo>((input.keys ?? []).map((k) => [k.id, k]));
  const walk = new ChainWalk(input.startSeq ?? 1, input.startPrevHash ?? GENESIS_PREV_HASH);

  for (const r of records) {
    checkLinks(walk, r);
    checkRecordedAt(walk, r);
    const payload = checkContent(walk, r, agent);
    checkChainHash(walk, r, agent);
    if (r.signature) checkSigned(walk, r, r.signature, payload, keys, verifySignature);
  }

  if (walk.totalFailures > walk.failures.length) {
    walk.failures.push({ name: 'more_failures', ok: false, detail: `and ${walk.totalFailures - walk.failures.length} more` });
  }
  const last = records.at(-1);
  return {
    ok: walk.totalFailures === 0,
    checks: summaries(walk),
    failures: walk.failures,
    head: last ? { seq: last.seq, chain_hash: last.chain_hash } : null,
  };
}

/**
 * §5 check 3: seq without gap, and prev_hash is the previous record's (stated) chain_hash. Both
 * resynchronise on the record found, so one gap or one altered record is one failure, reported
 * where it is and not again for every record after it.
 */
function checkLinks(walk: ChainWalk, r: ChainRecord): void {
  walk.counts.seq.checked++;
  if (r.seq !== walk.expectedSeq) walk.fail('seq', r, `expected seq ${walk.expectedSeq}, found ${r.seq}`);
  walk.expectedSeq = (Number.isSafeInteger(r.seq) ? r.seq : walk.expectedSeq) + 1;

  walk.counts.prev_hash.checked++;
  if (r.prev_hash !== walk.expectedPrev) {
    walk.fail('prev_hash', r, `expected prev_hash ${walk.expectedPrev} (chain_hash of the previous record), found ${r.prev_hash}`);
  }
  walk.expectedPrev = r.chain_hash;
}

/** §5 check 4: recorded_at format and order (fixed-width UTC strings sort chronologically). */
function checkRecordedAt(walk: ChainWalk, r: ChainRecord): void {
  walk.counts.recorded_at.checked++;
  if (!isRecordedAt(r.recorded_at)) {
    walk.fail('recorded_at', r, `recorded_at ${JSON.stringify(r.recorded_at)} is not a valid YYYY-MM-DDTHH:MM:SS.sssZ`);
    return;
  }
  if (walk.previousRecordedAt !== null && r.recorded_at < walk.previousRecordedAt) {
    walk.fail('recorded_at', r, `recorded_at ${r.recorded_at} is before the previous record's ${walk.previousRecordedAt}`);
  }
  walk.previousRecordedAt = r.recorded_at;
}

/** §5 check 1: content hash and envelope. Returns the canonical payload, or null when there is none. */
function checkContent(walk: ChainWalk, r: ChainRecord, agent: string): string | null {
  if (r.content === null || r.content === undefined) {
    walk.counts.content_hash.skipped++;
    walk.counts.content_envelope.skipped++;
    return null;
  }
  walk.counts.content_hash.checked++;
  let payload: string | null = null;
  try {
    payload = canonicalJson(r.content);
  } catch (e) {
    walk.fail('content_hash', r, `content cannot be serialised as canon_v1: ${describe(e)}`);
  }
  if (payload !== null) {
    const recomputed = sha256Hex(payload);
    if (recomputed !== r.content_hash) walk.fail('content_hash', r, `expected content_hash ${recomputed}, found ${r.content_hash}`);
  }
  walk.counts.content_envelope.checked++;
  const problem = envelopeProblem(r, agent);
  if (problem !== null) walk.fail('content_envelope', r, problem);
  return payload;
}

function envelopeProblem(r: ChainRecord, agent: string): string | null {
  const c = r.content;
  if (typeof c !== 'object' || c === null || Array.isArray(c)) return 'content is not a JSON object';
  const problems: string[] = [];
  if (c.canon !== CANON) problems.push(`canon is ${JSON.stringify(c.canon)}, expected "${CANON}"`);
  if (c.agent !== agent) problems.push(`agent is ${JSON.stringify(c.agent)}, expected ${JSON.stringify(agent)}`);
  if (c.type !== r.type) problems.push(`type is ${JSON.stringify(c.type)}, expected ${JSON.stringify(r.type)}`);
  return problems.length > 0 ? problems.join('; ') : null;
}

/** §5 check 2: the chain entry re-serialises to chain_hash. */
function checkChainHash(walk: ChainWalk, r: ChainRecord, agent: string): void {
  walk.counts.chain_hash.checked++;
  try {
    const recomputed = chainHash({
      agent, seq: r.seq, id: r.id, type: r.type, recordedAt: r.recorded_at,
      contentHash: r.content_hash, prevHash: r.prev_hash, signature: r.signature ?? null,
    });
    if (recomputed !== r.chain_hash) walk.fail('chain_hash', r, `expected chain_hash ${recomputed}, found ${r.chain_hash}`);
  } catch (e) {
    walk.fail('chain_hash', r, `chain entry cannot be serialised as canon_v1: ${describe(e)}`);
  }
}

/** §5 check 5: the agent's signature, when a verifier was given and the payload is there. */
function checkSigned(
  walk: ChainWalk, r: ChainRecord, sig: SignatureEnvelope, payload: string | null,
  keys: Map<string, KeyInfo>, verifySignature: SignatureVerifier | undefined,
): void {
  if (!verifySignature) {
    walk.counts.signature.skipped++;
    walk.signaturesWithoutVerifier++;
    return;
  }
  if (payload === null) {
    walk.counts.signature.skipped++;
    return;
  }
  walk.counts.signature.checked++;
  const problem = checkSignature(r, sig, payload, keys, verifySignature);
  if (problem !== null) walk.fail('signature', r, problem);
}

function summaries(walk: ChainWalk): Check[] {
  return CHECK_NAMES.map((name) => {
    const c = walk.counts[name];
    let detail = `${SUMMARY[name]}: ${c.checked} checked, ${c.failed} failed`;
    if (name === 'signature' && walk.signaturesWithoutVerifier > 0) {
      detail += `, ${walk.signaturesWithoutVerifier} not checked (no signature verifier given)`;
      if (c.skipped > walk.signaturesWithoutVerifier) detail += `, ${c.skipped - walk.signaturesWithoutVerifier} not checked (payload omitted)`;
    } else if (c.skipped > 0) {
      detail += `, ${c.skipped} not checked (payload omitted)`;
    }
    return { name, ok: c.failed === 0, detail, counts: { ...c } };
  });
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
