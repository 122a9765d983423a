// A rung of the write benchmark's ladder (bench/write.ts), run as a child process: the real
// service (startServer, as `ledger serve` runs it) with one layer of the record path taken
// away, so a run shows where a write's time goes. A measurement fixture only: these servers
// answer 201 for writes they never store, and nothing outside bench/ starts them.
//
//   BENCH_RUNG=guards    routing, the lossless parse, validation, API-key auth, the rate limiter
//                        and the Idempotency-Key check run; the record path answers a fixed 201
//   BENCH_RUNG=unstored  all of that and the record path (content document, canon_v1, hashes,
//                        ids, the signature check on the verifier thread, the commit queue); only
//                        the store's append is replaced by chaining in memory
import { GENESIS_PREV_HASH } from '../src/core/chain.ts';
import { loadConfig } from '../src/config.ts';
import { decisionResponse } from '../src/ledger/decisions.ts';
import { startServer } from '../src/server.ts';
import type { AppendOutcome, ChainPositioner, PendingRecord, StoredRecord } from '../src/store/port.ts';
import { sortKeyOf } from '../src/store/rows.ts';
import { serveAsChild } from './child.ts';

type Head = { seq: number; hash: string; recordedAt: string };

/** The store's append without the store: each record is chained after its agent's last one, in memory. */
function appendInMemory(): (batch: PendingRecord[], position: ChainPositioner) => Promise<AppendOutcome[]> {
  const heads = new Map<string, Head>();
  let newestSortKey: string | null = null;
  return async (batch, position) => batch.map((pending) => {
    const head = heads.get(pending.agentId);
    const seq = (head?.seq ?? 0) + 1;
    const prevHash = head?.hash ?? GENESIS_PREV_HASH;
    const { id, recordedAt, chainHash } = position({ pending, seq, prevHash, prevRecordedAt: head?.recordedAt ?? null, newestSortKey });
    newestSortKey = sortKeyOf(id);
    heads.set(pending.agentId, { seq, hash: chainHash, recordedAt });
    const record: StoredRecord = { ...pending, id, recordedAt, chainHash, prevHash, chainSeq: seq };
    return { kind: 'recorded', record, response: pending.respond(record) };
  });
}

/** What the record path answers for the bench decision, with made-up identity: same shape and length. */
function fixedAnswer(baseUrl: string): string {
  const record: StoredRecord = {
    id: 'dec_' + '0'.repeat(26), agentId: 'agt_bench', agentHandle: 'bench-0', type: 'decision',
    chainSeq: 1, recordedAt: new Date().toISOString(), symbol: 'AAPL', content: '{}', contentHash: 'a'.repeat(64),
    prevHash: GENESIS_PREV_HASH, chainHash: 'b'.repeat(64), signature: null, linkToken: 'lt_' + '0'.repeat(24),
  };
  return JSON.stringify(decisionResponse(record, baseUrl));
}

const rung = process.env.BENCH_RUNG;
if (rung !== 'guards' && rung !== 'unstored') throw new Error(`BENCH_RUNG must be guards or unstored, not ${rung}`);
const config = loadConfig(process.env);
const server = await startServer(config);
if (rung === 'guards') {
  const body = fixedAnswer(config.baseUrl);
  server.ledger.decisions.record = async () => ({ kind: 'created', status: 201, body });
} else {
  server.store.appendBatch = appendInMemory();
}
serveAsChild(server.url, server.stop);
