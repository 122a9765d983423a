// Shared checks for the record-path tests: an agent's whole chain read back from the store and
// recomputed with the canon_v1 core, the chain head (to prove a failure recorded nothing), and
// the 2.7 error body.
import assert from 'node:assert/strict';
import type { CanonValue } from '../../src/core/canon.ts';
import { verifyChain, type ChainRecord } from '../../src/core/verify.ts';
import type { StoredRecord } from '../../src/domain/types.ts';
import type { LedgerStore } from '../../src/store/port.ts';

/** Every record of an agent, in chain order, straight from the store. */
export async function storedChain(store: LedgerStore, agentId: string): Promise<StoredRecord[]> {
  const chain: StoredRecord[] = [];
  for (;;) {
    const page = await store.listChain(agentId, chain.length, 1000);
    chain.push(...page);
    if (page.length < 1000) return chain;
  }
}

export function asChainRecord(r: StoredRecord): ChainRecord {
  return {
    seq: r.chainSeq,
    id: r.id,
    type: r.type,
    recorded_at: r.recordedAt,
    content: JSON.parse(r.content) as CanonValue,
    content_hash: r.contentHash,
    prev_hash: r.prevHash,
    chain_hash: r.chainHash,
    signature: r.signature,
  };
}

/** Recomputes the agent's chain from the stored records; asserts it is gapless (1..n) and every hash holds. */
export async function assertChainVerifies(store: LedgerStore, agent: { agentId: string; handle: string }, expectedLength?: number): Promise<StoredRecord[]> {
  const records = await storedChain(store, agent.agentId);
  if (expectedLength !== undefined) assert.equal(records.length, expectedLength, 'chain length');
  assert.deepEqual(records.map((r) => r.chainSeq), records.map((_, i) => i + 1), 'chain_seq runs 1..n without gap');
  const result = verifyChain({ agent: agent.handle, records: records.map(asChainRecord) });
  assert.equal(result.ok, true, JSON.stringify(result.failures));
  const head = await store.chainHead(agent.agentId);
  assert.equal(head.seq, records.length, 'chain head seq');
  if (records.length > 0) assert.equal(head.hash, records[records.length - 1]!.chainHash, 'chain head hash');
  return records;
}

/** The agent's chain head as `seq:hash`, to compare before and after a refused request. */
export async function headOf(store: LedgerStore, agentId: string): Promise<string> {
  const head = await store.chainHead(agentId);
  return `${head.seq}:${head.hash}`;
}

type InjectLike = { statusCode: number; headers: Record<string, unknown>; body: string };

/** Asserts the response is the interface's 2.7 error body with this status and code (and param, when given). */
export function assertError(res: InjectLike, status: number, code: string, param?: string | null): { type: string; code: string; message: string; param?: string; request_id: string } {
  assert.equal(res.statusCode, status, res.body);
  assert.match(String(res.headers['content-type']), /^application\/json/);
  const body = JSON.parse(res.body) as { error: { type: string; code: string; message: string; param?: string; request_id: string } };
  assert.deepEqual(Object.keys(body), ['error']);
  const e = body.error;
  assert.equal(e.code, code, res.body);
  assert.equal(typeof e.type, 'string');
  assert.ok(e.message.length > 0);
  assert.match(e.request_id, /^req_[0-9a-f]{24}$/);
  assert.equal(e.request_id, res.headers['request-id'], 'request_id equals the request-id header');
  for (const k of Object.keys(e)) assert.ok(['type', 'code', 'message', 'param', 'doc_url', 'request_id'].includes(k), `unexpected error member ${k}`);
  if (param === null) assert.equal(e.param, undefined, 'no param');
  else if (param !== undefined) assert.equal(e.param, param, res.body);
  return e;
}

/** A valid decision body, fresh each call. */
export const validDecision = (extra: Record<string, unknown> = {}): Record<string, unknown> => ({ symbol: 'AAPL', action: 'BUY', ...extra });
