// The append protocol: how a batch of records joins the agents' chains, decided in one place for
// every store and every record type (decisions today, executions next). The store gathers the
// facts in its transaction and writes the rows; `planAppend` decides, synchronously and without
// I/O, what becomes of each request. Its order of checks, for each request in batch order:
//
//   1. the agent is active                          -> else agent_not_active
//   2. its Idempotency-Key is unused                -> else idempotency_conflict (a replay, or a race)
//   3. its signing key is the agent's and unrevoked -> else key_revoked
//   4. its signature nonce is unused                -> else nonce_used
//   5. it is placed at the agent's head: next seq, id after every id so far, recorded_at never
//      before the previous record's, chain hash.
//
// Earlier requests of the same batch count as facts for later ones (a key or nonce used twice in
// one batch records once). A refused request writes nothing, its Idempotency-Key included.
import { chainHash, formatRecordedAt, type RecordType, type SignatureEnvelope } from '../core/chain.ts';
import type { StoredRecord } from '../domain/types.ts';
import {
  agentValueKey, type AddedCounts, type AgentValue, type AppendFacts, type AppendPlan, type AppendQuestions,
  type AppendRows, type HeadFact, type LedgerStore,
} from '../store/port.ts';
import type { Clock } from '../domain/clock.ts';
import { sortKeyOf } from '../core/chain.ts';
import { recordId } from './ids.ts';

/** A record to append: everything that does not depend on its place in the chain. */
export type AppendRequest = {
  agentId: string;
  agentHandle: string;
  type: RecordType;
  symbol: string | null;
  content: string;
  contentHash: string;
  signature: SignatureEnvelope | null;
  linkToken: string | null;
  idempotency: { key: string; fingerprint: string } | null;
};

export type AppendOutcome =
  | { kind: 'recorded'; record: StoredRecord }
  | { kind: 'agent_not_active' }
  | { kind: 'idempotency_conflict' }
  | { kind: 'key_revoked' }
  | { kind: 'nonce_used' };

/** The status stored with an Idempotency-Key: a recorded request answered 201. */
const RECORDED_STATUS = 201;

/** What the store must look up for `batch`. */
export function appendQuestions(batch: readonly AppendRequest[]): AppendQuestions {
  const pairs = (pick: (r: AppendRequest) => string | undefined): AgentValue[] =>
    batch.flatMap((r) => {
      const value = pick(r);
      return value === undefined ? [] : [{ agentId: r.agentId, value }];
    });
  return {
    agentIds: [...new Set(batch.map((r) => r.agentId))].sort(),
    idempotencyKeys: pairs((r) => r.idempotency?.key),
    signingKeyIds: pairs((r) => r.signature?.key_id),
    nonces: pairs((r) => r.signature?.nonce),
  };
}

type Head = HeadFact & { added: AddedCounts; moved: boolean };

/** Decides every outcome and row of `batch` from `facts`, at service time `now`. */
export function planAppend(batch: readonly AppendRequest[], facts: AppendFacts, now: Date): AppendPlan<AppendOutcome[]> {
  const heads = new Map<string, Head>();
  const usedKeys = new Set(facts.usedIdempotencyKeys);
  const usedNonces = new Set(facts.usedNonces);
  let newestSortKey = facts.newestSortKey;
  const rows: AppendRows = { records: [], idempotencyKeys: [], nonces: [], heads: [] };

  const headOf = (agentId: string): Head | undefined => {
    let head = heads.get(agentId);
    const fact = facts.heads.get(agentId);
    if (!head && fact) heads.set(agentId, (head = { ...fact, added: { decision: 0, execution: 0, activity: 0, signed: 0 }, moved: false }));
    return head;
  };

  const outcomes = batch.map((request): AppendOutcome => {
    const head = headOf(request.agentId);
    if (!head?.active) return { kind: 'agent_not_active' };
    const idempotencyKey = request.idempotency && agentValueKey(request.agentId, request.idempotency.key);
    if (idempotencyKey && usedKeys.has(idempotencyKey)) return { kind: 'idempotency_conflict' };
    const signature = request.signature;
    if (signature && !facts.usableSigningKeys.has(agentValueKey(request.agentId, signature.key_id))) return { kind: 'key_revoked' };
    const nonceKey = signature && agentValueKey(request.agentId, signature.nonce);
    if (nonceKey && usedNonces.has(nonceKey)) return { kind: 'nonce_used' };

    const record = place(request, head, now, newestSortKey);
    newestSortKey = sortKeyOf(record.id);
    rows.records.push(record);
    if (idempotencyKey) {
      usedKeys.add(idempotencyKey);
      rows.idempotencyKeys.push({
        agentId: request.agentId, key: request.idempotency!.key, fingerprint: request.idempotency!.fingerprint,
        recordId: record.id, status: RECORDED_STATUS, createdAt: record.recordedAt,
      });
    }
    if (nonceKey) {
      usedNonces.add(nonceKey);
      rows.nonces.push({ agentId: request.agentId, nonce: signature.nonce, recordId: record.id });
    }
    advance(head, record);
    return { kind: 'recorded', record };
  });

  for (const [agentId, head] of heads) {
    if (head.moved) rows.heads.push({ agentId, seq: head.seq, hash: head.hash, recordedAt: head.recordedAt!, added: head.added });
  }
  return { rows, result: outcomes };
}

/** The record at the agent's head: id, service timestamp and chain hash. */
function place(request: AppendRequest, head: HeadFact, now: Date, newestSortKey: string | null): StoredRecord {
  const prevMs = head.recordedAt ? Date.parse(head.recordedAt) : -Infinity;
  const timeMs = Math.max(now.getTime(), prevMs);
  const recordedAt = formatRecordedAt(new Date(timeMs));
  const id = recordId(request.type, timeMs, newestSortKey);
  const seq = head.seq + 1;
  const hash = chainHash({
    agent: request.agentHandle, seq, id, type: request.type, recordedAt,
    contentHash: request.contentHash, prevHash: head.hash, signature: request.signature,
  });
  return {
    id, agentId: request.agentId, agentHandle: request.agentHandle, type: request.type, chainSeq: seq, recordedAt,
    symbol: request.symbol, content: request.content, contentHash: request.contentHash, prevHash: head.hash,
    chainHash: hash, signature: request.signature, linkToken: request.linkToken,
  };
}

function advance(head: Head, record: StoredRecord): void {
  head.seq = record.chainSeq;
  head.hash = record.chainHash;
  head.recordedAt = record.recordedAt;
  head.moved = true;
  head.added[record.type] += 1;
  if (record.signature) head.added.signed += 1;
}

/** Appends `batch` in one durable transaction; outcomes are in the order of `batch`. */
export function appendRecords(store: LedgerStore, batch: readonly AppendRequest[], clock: Clock): Promise<AppendOutcome[]> {
  return store.appendBatch(appendQuestions(batch), (facts) => planAppend(batch, facts, clock.now()));
}
