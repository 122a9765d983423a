// A rung of the write benchmark's ladder (bench/write.ts), run as a child process: the SQLite
// service composed as `ledger serve` composes it (src/server.ts: store, verifier thread,
// signature checker, buildApp), with one layer of the write replaced by a fake given to buildApp
// as a dependency, so a run shows where a write's time goes. A measurement fixture only: these
// servers answer 201 for writes they never store, and nothing outside bench/ starts them.
//
//   BENCH_RUNG=guards    routing, the lossless parse, validation, API-key auth, the rate limiter
//                        and the Idempotency-Key check run; the record path (buildApp's
//                        `decisions`) answers a fixed 201
//   BENCH_RUNG=unstored  all of that and the record path (content document, canon_v1, hashes,
//                        ids, the signature check on the verifier thread, the commit queue); the
//                        store buildApp is given chains appends in memory instead of storing them
import { buildApp } from '../src/api/app.ts';
import { compose } from '../src/compose.ts';
import { loadConfig } from '../src/config.ts';
import { GENESIS_PREV_HASH } from '../src/core/chain.ts';
import { systemClock } from '../src/domain/clock.ts';
import { decisionResponse, DecisionService, type DecisionOutcome, type DecisionServiceOptions } from '../src/ledger/decisions.ts';
import { signatureChecker } from '../src/ledger/signing.ts';
import { VerifierThread, warnWhenLate } from '../src/ledger/verifier-thread.ts';
import { openStore } from '../src/store/open.ts';
import type { StoredRecord } from '../src/domain/types.ts';
import { agentValueKey, type HeadFact, type LedgerStore } from '../src/store/port.ts';
import { serveAsChild } from './child.ts';

/**
 * The store as it is, except that appends are planned on facts kept in memory (every signing
 * key usable, no key or nonce used before) and their rows are never written.
 */
function appendingInMemory(store: LedgerStore): LedgerStore {
  const heads = new Map<string, HeadFact>();
  let newestSortKey: string | null = null;
  const appendBatch: LedgerStore['appendBatch'] = async (questions, plan) => {
    for (const agentId of questions.agentIds) {
      if (!heads.has(agentId)) heads.set(agentId, { seq: 0, hash: GENESIS_PREV_HASH, recordedAt: null, active: true });
    }
    const { rows, result } = plan({
      heads, usedIdempotencyKeys: new Set(), usedNonces: new Set(), newestSortKey,
      usableSigningKeys: new Set(questions.signingKeyIds.map((k) => agentValueKey(k.agentId, k.value))),
    });
    for (const head of rows.heads) heads.set(head.agentId, { seq: head.seq, hash: head.hash, recordedAt: head.recordedAt, active: true });
    const last = rows.records.at(-1);
    if (last) newestSortKey = last.id.slice(last.id.indexOf('_') + 1);
    return result;
  };
  // A view of the store, not a change to it: every other member is the store's own, bound to it.
  return new Proxy(store, {
    get(target, name) {
      if (name === 'appendBatch') return appendBatch;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** A record path that answers every write with what the real one answers for the bench decision, with made-up identity: same shape and length. */
class FixedAnswer extends DecisionService {
  private readonly body: string;
  constructor(options: DecisionServiceOptions) {
    super(options);
    const record: StoredRecord = {
      id: 'dec_' + '0'.repeat(26), agentId: 'agt_bench', agentHandle: 'bench-0', type: 'decision',
      chainSeq: 1, recordedAt: new Date().toISOString(), symbol: 'AAPL', content: '{}', contentHash: 'a'.repeat(64),
      prevHash: GENESIS_PREV_HASH, chainHash: 'b'.repeat(64), signature: null, linkToken: 'lt_' + '0'.repeat(24),
    };
    this.body = JSON.stringify(decisionResponse(record, options.baseUrl));
  }

  override async record(): Promise<DecisionOutcome> {
    return { kind: 'created', status: 201, body: this.body };
  }
}

const rung = process.env.BENCH_RUNG;
if (rung !== 'guards' && rung !== 'unstored') throw new Error(`BENCH_RUNG must be guards or unstored, not ${rung}`);
const config = loadConfig(process.env);
const store = openStore(config.databaseUrl);
await store.migrate();
const verifier = new VerifierThread({ onLate: warnWhenLate((message) => ledger.app.log.warn(message)) });
const checkSignature = signatureChecker(store, verifier.verify);
const ledger = await buildApp(compose(
  { store: rung === 'unstored' ? appendingInMemory(store) : store, config, checkSignature },
  rung === 'guards' ? { decisions: new FixedAnswer({ store, clock: systemClock, baseUrl: config.baseUrl, checkSignature }) } : {},
), { logger: { level: config.logLevel } });
const url = await ledger.app.listen({ port: config.port, host: config.host });
serveAsChild(url, async () => {
  await ledger.close();
  await verifier.close();
  await store.close();
});
