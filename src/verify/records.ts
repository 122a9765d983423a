// The verifier's per-record work: turn a published record (`{"entry", "chain_hash", "content",
// "document"?}`, as the chain, proof and export responses carry it) into the core's ChainRecord,
// run the core's verifyChain over a chunk of them, and add the checks only a published form
// needs: the entry has exactly canon_v1's members, the content text is the exact hashed bytes,
// and a convenience `document` says the same as the content.
// Pure apart from the core's Ed25519 check (the one the record path uses too); runs in the main
// thread or in a verify worker. Of the project it imports only src/core (and bounds.ts's nesting
// bound).
import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { CANON, type RecordType, type SignatureEnvelope } from '../core/chain.ts';
import { sha256Hex } from '../core/sha256.ts';
import { verifyChain, type Check, type ChainRecord, type KeyInfo } from '../core/verify.ts';
import { verifyEd25519 } from '../core/ed25519.ts';
import { isObject, nestedDeeperThan } from '../core/json.ts';
import { MAX_JSON_NESTING } from './bounds.ts';

/** The verifier's checks, in report order: the core's, then the published form's. */
export const CHECKS = [
  ['record_form', 'each record is a JSON object with entry, chain_hash and content, and nothing unknown'],
  ['entry_members', 'each chain entry has exactly the canon_v1 members, in their canonical form'],
  ['seq', 'seq runs without gap'],
  ['prev_hash', 'prev_hash links to the previous chain_hash'],
  ['recorded_at', 'recorded_at well-formed and non-decreasing'],
  ['content_bytes', 'the content text is the bytes whose sha256 is content_hash'],
  ['content_hash', 'content re-serialises (canon_v1) to content_hash'],
  ['content_envelope', 'content carries canon_v1, the agent and the record type'],
  ['document', 'the convenience document says the same as the content'],
  ['chain_hash', 'chain entry re-serialises (canon_v1) to chain_hash'],
  ['signature', 'agent signatures verify under a key valid at recorded_at'],
] as const;

export type CheckName = (typeof CHECKS)[number][0];
export type Tally = { checked: number; failed: number; skipped: number };
export type Failure = { name: string; where: string; detail: string; seq?: number; id?: string };

/** Where a chunk starts and ends, so chunks verified apart can be joined in order. */
export type Edge = { seq: number; id: string; prev_hash: string; chain_hash: string; recorded_at: string; line?: number | undefined };

export type ChunkResult = {
  records: number;
  tallies: Record<CheckName, Tally>;
  failures: Failure[];
  failureCount: number;
  first: Edge | null;
  last: Edge | null;
  /** seq -> chain_hash of the records a --pin asked about. */
  pinned: Record<string, string>;
};

export type ChunkInput = {
  agent: string;
  keys: KeyInfo[];
  /** Record texts (NDJSON lines) or already parsed records. */
  records?: (string | unknown)[];
  /** Or: NDJSON lines as raw UTF-8 bytes (a block of an export), decoded here. */
  bytes?: Uint8Array;
  /** Where the first record is, for messages: its line number in the source, if it has one. */
  firstLine?: number | undefined;
  pins: number[];
  /** Every record must carry its content (exports, proofs, chain pages with payloads). */
  requireContent: boolean;
};

/** Failures listed per chunk (and overall); more are counted, not listed. */
export const MAX_LISTED = 100;

const RECORD_MEMBERS = new Set(['entry', 'chain_hash', 'content', 'document', 'proof_url', 'provenance', 'broker', 'price_observation']);
const ENTRY_MEMBERS = new Set(['canon', 'agent', 'seq', 'id', 'type', 'recorded_at', 'content_hash', 'prev_hash', 'signature']);
const REQUIRED_MEMBERS = ['canon', 'agent', 'seq', 'id', 'type', 'recorded_at', 'content_hash', 'prev_hash'];
const SEQ = /^[1-9][0-9]{0,15}$/;
const RECORD_TYPES: readonly string[] = ['decision', 'execution', 'activity'];
/** Record types a broker sync imports: shown with provenance BROKER_SYNCED and their broker. */
const BROKER_SYNCED_TYPES: readonly unknown[] = ['execution', 'activity'];

export function emptyTallies(): Record<CheckName, Tally> {
  return Object.fromEntries(CHECKS.map(([name]) => [name, { checked: 0, failed: 0, skipped: 0 }])) as Record<CheckName, Tally>;
}


type Parsed = { record: ChainRecord; entryProblems: string[]; contentText: string | null; document: unknown; hasDocument: boolean };

function describeWhere(seq: number | undefined, id: string | undefined, line: number | undefined): string {
  const parts: string[] = [];
  if (seq !== undefined && Number.isSafeInteger(seq)) parts.push(`seq ${seq}`);
  if (id) parts.push(id);
  if (line !== undefined) parts.push(`line ${line}`);
  return parts.join(' ') || 'record';
}

/** A published record -> the core's ChainRecord, plus what is wrong with its entry's form. */
/**
 * The labels a public read puts beside an execution or an activity (`provenance`, `broker`) are not
 * hashed, so they must say exactly what the hashed record says: BROKER_SYNCED on broker imports
 * only, and the broker named in the content.
 */
function provenanceProblems(value: Record<string, unknown>, type: unknown, content: CanonValue | null, problems: string[]): void {
  if (value.provenance === undefined && value.broker === undefined) return;
  if (!BROKER_SYNCED_TYPES.includes(type) || value.provenance !== 'BROKER_SYNCED') {
    problems.push(`provenance ${JSON.stringify(value.provenance)} does not fit a ${JSON.stringify(type)} record (only executions and activities are BROKER_SYNCED)`);
    return;
  }
  const broker = isObject(content) && typeof content.broker === 'string' ? content.broker : null;
  if (content !== null && value.broker !== broker) problems.push(`broker ${JSON.stringify(value.broker)} is not the content's broker ${JSON.stringify(broker)}`);
}

/**
 * The price observed at a decision's receipt (an export line's `price_observation`) is not hashed
 * either: it is the service's answer from a market-data provider, to check against any other
 * source (docs/pricing.md). It must at least be about this record: a decision's, naming its id,
 * its recorded_at as the instant priced, and the content's symbol.
 */
function observationProblems(value: Record<string, unknown>, entry: Record<string, unknown>, content: CanonValue | null, problems: string[]): void {
  if (!('price_observation' in value)) return;
  const o = value.price_observation;
  if (entry.type !== 'decision') {
    problems.push(`price_observation on a ${JSON.stringify(entry.type)} record (only decisions are priced)`);
    return;
  }
  if (o === null) return;
  if (!isObject(o)) {
    problems.push('price_observation is neither an object nor null');
    return;
  }
  if (o.record_id !== entry.id) problems.push(`price_observation.record_id ${JSON.stringify(o.record_id)} is not the record's id`);
  if (o.asked_at !== entry.recorded_at) problems.push(`price_observation.asked_at ${JSON.stringify(o.asked_at)} is not the record's recorded_at`);
  const symbol = isObject(content) ? content.symbol : undefined;
  if (content !== null && o.symbol !== symbol) problems.push(`price_observation.symbol ${JSON.stringify(o.symbol)} is not the content's symbol ${JSON.stringify(symbol)}`);
}

function parseRecord(raw: unknown, agent: string, requireContent: boolean): Parsed | string {
  let value = raw;
  if (typeof raw === 'string') {
    if (nestedDeeperThan(raw, MAX_JSON_NESTING)) return `nests JSON deeper than ${MAX_JSON_NESTING} levels`;
    try {
      value = JSON.parse(raw);
    } catch (e) {
      return `not valid JSON: ${(e as Error).message}`;
    }
  }
  if (!isObject(value)) return 'not a JSON object';
  const unknown = Object.keys(value).find((k) => !RECORD_MEMBERS.has(k));
  if (unknown !== undefined) return `has an unknown member ${JSON.stringify(unknown)}`;
  if (requireContent && value.content === undefined) return 'has no content (this input must carry every record\'s content)';
  const entry = value.entry;
  if (!isObject(entry)) return 'has no entry object';
  if (typeof value.chain_hash !== 'string') return 'has no chain_hash string';
  const problems: string[] = [];
  for (const k of Object.keys(entry)) if (!ENTRY_MEMBERS.has(k)) problems.push(`unknown member ${JSON.stringify(k)}`);
  for (const k of REQUIRED_MEMBERS) if (typeof entry[k] !== 'string') problems.push(`${k} is missing or not a string`);
  if (entry.canon !== undefined && entry.canon !== CANON) problems.push(`canon is ${JSON.stringify(entry.canon)}, expected "${CANON}"`);
  if (typeof entry.agent === 'string' && entry.agent !== agent) problems.push(`agent is ${JSON.stringify(entry.agent)}, expected ${JSON.stringify(agent)}`);
  if (typeof entry.seq === 'string' && !SEQ.test(entry.seq)) problems.push(`seq ${JSON.stringify(entry.seq)} is not a canonical decimal string`);
  if (typeof entry.type === 'string' && !RECORD_TYPES.includes(entry.type)) problems.push(`type ${JSON.stringify(entry.type)} is not a record type`);
  const signature = signatureOf(entry.signature, problems);
  let contentText: string | null = null;
  let content: CanonValue | null = null;
  if (value.content !== undefined) {
    if (typeof value.content !== 'string') return 'content is not a string';
    contentText = value.content;
    try {
      content = JSON.parse(contentText) as CanonValue;
    } catch {
      content = null; // reported by content_bytes (it cannot hash to content_hash) and content_hash
    }
  }
  provenanceProblems(value, entry.type, content, problems);
  observationProblems(value, entry, content, problems);
  const seq = typeof entry.seq === 'string' ? Number(entry.seq) : NaN;
  return {
    record: {
      seq,
      id: String(entry.id ?? ''),
      type: String(entry.type ?? '') as RecordType,
      recorded_at: String(entry.recorded_at ?? ''),
      content,
      content_hash: String(entry.content_hash ?? ''),
      prev_hash: String(entry.prev_hash ?? ''),
      chain_hash: value.chain_hash,
      signature,
    },
    entryProblems: problems,
    contentText,
    document: value.document,
    hasDocument: value.document !== undefined,
  };
}

function signatureOf(v: unknown, problems: string[]): SignatureEnvelope | null {
  if (v === undefined) return null;
  if (!isObject(v) || Object.keys(v).length !== 3 || typeof v.key_id !== 'string' || typeof v.nonce !== 'string' || typeof v.signature !== 'string') {
    problems.push('signature must be exactly {key_id, nonce, signature}, all strings');
    return null;
  }
  return { key_id: v.key_id, nonce: v.nonce, signature: v.signature };
}

/** A chunk's failures: the first MAX_LISTED listed, all counted. */
class Failures {
  readonly listed: Failure[] = [];
  count = 0;

  add(name: string, where: string, detail: string, seq?: number, id?: string): void {
    this.count++;
    if (this.listed.length < MAX_LISTED) this.listed.push({ name, where, detail, ...(seq !== undefined ? { seq } : {}), ...(id ? { id } : {}) });
  }
}

type Tallies = Record<CheckName, Tally>;

/**
 * Verifies a run of consecutive records. The chunk is anchored on its own first record (its
 * stated seq and prev_hash): the caller joins chunks with `joinEdge`, which also covers the
 * first record of the whole walk.
 */
export function verifyChunk(input: ChunkInput): ChunkResult {
  const tallies = emptyTallies();
  const failures = new Failures();
  const records: ChainRecord[] = [];
  const lines: (number | undefined)[] = [];
  const pinned: Record<string, string> = {};
  const pins = new Set(input.pins);

  const inputRecords = input.bytes ? blockLines(input.bytes) : input.records ?? [];
  inputRecords.forEach((raw, i) => {
    const line = input.firstLine === undefined ? undefined : input.firstLine + i;
    const r = checkRecord(raw, line, input, tallies, failures);
    if (r === null) return;
    if (pins.has(r.seq)) pinned[String(r.seq)] = r.chain_hash;
    records.push(r);
    lines.push(line);
  });
  if (records.length > 0) checkChain(input, records, lines, tallies, failures);

  const edge = (i: number): Edge => {
    const r = records[i]!;
    return { seq: r.seq, id: r.id, prev_hash: r.prev_hash, chain_hash: r.chain_hash, recorded_at: r.recorded_at, line: lines[i] };
  };
  return {
    records: inputRecords.length,
    tallies,
    failures: failures.listed,
    failureCount: failures.count,
    first: records.length > 0 ? edge(0) : null,
    last: records.length > 0 ? edge(records.length - 1) : null,
    pinned,
  };
}

/** One record's own checks (its form, entry members, content bytes and document); the record, or null if it has no usable form. */
function checkRecord(raw: unknown, line: number | undefined, input: ChunkInput, tallies: Tallies, failures: Failures): ChainRecord | null {
  tallies.record_form.checked++;
  const parsed = parseRecord(raw, input.agent, input.requireContent);
  if (typeof parsed === 'string') {
    tallies.record_form.failed++;
    failures.add('record_form', describeWhere(undefined, undefined, line), `record ${parsed}`);
    return null;
  }
  const { record: r } = parsed;
  const where = describeWhere(r.seq, r.id, line);
  const fail = (name: CheckName, detail: string) => {
    tallies[name].failed++;
    failures.add(name, where, detail, r.seq, r.id);
  };
  tallies.entry_members.checked++;
  if (parsed.entryProblems.length > 0) fail('entry_members', parsed.entryProblems.join('; '));
  if (parsed.contentText === null) {
    tallies.content_bytes.skipped++;
  } else {
    tallies.content_bytes.checked++;
    const hash = sha256Hex(parsed.contentText);
    if (hash !== r.content_hash) fail('content_bytes', `sha256 of the content text is ${hash}, content_hash is ${r.content_hash}`);
    if (r.content === null) {
      tallies.content_hash.checked++;
      fail('content_hash', 'the content text is not valid JSON, so it has no canon_v1 form');
    }
  }
  if (parsed.hasDocument) {
    tallies.document.checked++;
    if (!documentMatches(parsed)) fail('document', 'document does not serialise (canon_v1) to the content text');
  }
  return r;
}

function documentMatches(parsed: Parsed): boolean {
  try {
    return parsed.contentText !== null && canonicalJson(parsed.document as CanonValue) === parsed.contentText;
  } catch {
    return false;
  }
}

/** The chain's checks over the chunk's records (core/chain.ts), their failures placed by line. */
function checkChain(input: ChunkInput, records: ChainRecord[], lines: (number | undefined)[], tallies: Tallies, failures: Failures): void {
  const first = records[0]!;
  const result = verifyChain({
    agent: input.agent,
    records,
    keys: input.keys,
    verifySignature: verifyEd25519,
    startSeq: Number.isSafeInteger(first.seq) ? first.seq : 1,
    startPrevHash: first.prev_hash,
  });
  mergeCoreTallies(tallies, result.checks);
  for (const f of result.failures) {
    if (f.name === 'more_failures') {
      failures.count += Number(/\d+/.exec(f.detail ?? '')?.[0] ?? 0);
      continue;
    }
    const line = f.seq === undefined ? undefined : lines[records.findIndex((r) => r.seq === f.seq && r.id === f.id)];
    failures.add(f.name, describeWhere(f.seq, f.id, line), f.detail ?? '', f.seq, f.id);
  }
}

const decoder = new TextDecoder('utf-8');

/** The lines of an NDJSON block (the newline after the last one is optional). */
function blockLines(bytes: Uint8Array): string[] {
  const lines = decoder.decode(bytes).split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines.map((l) => (l.endsWith('\r') ? l.slice(0, -1) : l));
}

/** The core's summary checks, added into the verifier's tallies. */
function mergeCoreTallies(tallies: Record<CheckName, Tally>, checks: Check[]): void {
  for (const c of checks) {
    const t = tallies[c.name as CheckName];
    if (!t || !c.counts) continue;
    t.checked += c.counts.checked;
    t.failed += c.counts.failed;
    t.skipped += c.counts.skipped;
  }
}

/**
 * Joins a chunk to what came before it: its first record must follow `previous` (seq + 1,
 * prev_hash = previous chain_hash, recorded_at not earlier). `previous` null means the walk
 * starts mid-chain, where the first link cannot be checked.
 */
export function joinEdge(previous: Edge | null, first: Edge): Failure[] {
  if (previous === null) return [];
  const where = describeWhere(first.seq, first.id, first.line);
  const out: Failure[] = [];
  if (first.seq !== previous.seq + 1) {
    out.push({ name: 'seq', where, detail: `expected seq ${previous.seq + 1}, found ${first.seq}`, seq: first.seq, id: first.id });
  }
  if (first.prev_hash !== previous.chain_hash) {
    const what = previous.seq === 0 ? 'the all-zero genesis prev_hash' : 'chain_hash of the previous record';
    out.push({ name: 'prev_hash', where, detail: `expected prev_hash ${previous.chain_hash} (${what}), found ${first.prev_hash}`, seq: first.seq, id: first.id });
  }
  if (previous.recorded_at !== '' && first.recorded_at < previous.recorded_at) {
    out.push({ name: 'recorded_at', where, detail: `recorded_at ${first.recorded_at} is before the previous record's ${previous.recorded_at}`, seq: first.seq, id: first.id });
  }
  return out;
}
