// Bulk seeding for read benchmarks and large-ledger tests: writes valid chains straight into the
// store's tables in big transactions, with real canon_v1 content and chain hashes computed by the
// core, so a million records take minutes, not the hours the HTTP path would need.
// The layout: one "whale" agent holding most records (its export is the big one), a few small
// agents (one of them demo) interleaved in time, all on one timeline one millisecond apart.
import { generateKeyPairSync, sign } from 'node:crypto';
import { monotonicFactory } from 'ulid';
import { canonicalJson } from '../src/core/canon.ts';
import { chainHash, GENESIS_PREV_HASH, type SignatureEnvelope } from '../src/core/chain.ts';
import { decisionContent } from '../src/core/decision.ts';
import { sha256Hex } from '../src/core/sha256.ts';
import { systemClock } from '../src/ledger/clock.ts';
import { Operators } from '../src/ledger/operators.ts';
import type { StoredRecord } from '../src/domain/types.ts';
import { INSERT_RECORD_SQLITE, recordParams, sortKeyOf } from '../src/store/rows.ts';
import { insertRecords, type PostgresStore } from '../src/store/postgres/store.ts';
import { SqliteStore } from '../src/store/sqlite/store.ts';

export type SeedOptions = {
  /** Records of the whale agent. */
  whale: number;
  /** Small agents, each with `perSmall` records; the last one is a demo agent. */
  smallAgents: number;
  perSmall: number;
  /** Every n-th whale record is agent-signed (0: none). */
  signedEvery?: number;
  /** recorded_at of the first record; records follow 1 ms apart. Default: whole timeline ends an hour ago. */
  startMs?: number;
  handlePrefix?: string;
  /** Progress callback, called after each committed batch. */
  onProgress?: (written: number, total: number) => void;
};

export type SeededAgent = { handle: string; agentId: string; demo: boolean; records: number; secret: string };
export type SeedResult = { whale: SeededAgent; small: SeededAgent[]; total: number; signingKey: { id: string; publicKey: string } | null };

const SYMBOLS = ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL', 'META', 'TSLA', 'BTC/USD', 'ETH/USD', 'SPY', 'QQQ', 'AMD', 'NFLX', 'JPM', 'XOM', 'KO'];
const ACTIONS = ['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'];
const THESES = [
  'Breakout above the 200-day average with volume confirming the move; risk capped at 2% of the book.',
  'Earnings revisions turning up while the multiple sits below its five-year median.',
  'Momentum fading after a parabolic run; trimming into strength and keeping a core position.',
  'Macro data points to slowing growth; rotating toward quality and cash-generative names.',
];

const BATCH = 10_000;

/** A seeded agent's chain so far; every seeded record is a decision, so seq is also its decision count. */
type Chain = { agent: SeededAgent; seq: number; prevHash: string; prevRecordedAt: string | null; signed: number };

/** The decision content a seeded record carries (valid under the decision rules). */
function contentOf(handle: string, n: number, nonce: string | undefined): string {
  const fields = {
    symbol: SYMBOLS[n % SYMBOLS.length]!,
    action: ACTIONS[n % ACTIONS.length]!,
    quantity: String((n % 997) + 1),
    confidence: `0.${(n % 9) + 1}`,
    time_horizon: `${(n % 12) + 1} weeks`,
    thesis: THESES[n % THESES.length]!,
    metadata: { strategy: 'seeded', batch: String(Math.floor(n / BATCH)) },
  };
  const made = decisionContent({ agent: handle, fields, ...(nonce ? { nonce } : {}), now: new Date() });
  if (!made.ok) throw new Error(`seed content invalid: ${made.error.message}`);
  return canonicalJson(made.document);
}

export async function seed(store: LedgerStore, o: SeedOptions): Promise<SeedResult> {
  const prefix = o.handlePrefix ?? 'bench';
  const operators = new Operators(store, systemClock);
  const make = async (handle: string, demo: boolean, records: number): Promise<SeededAgent> => {
    const created = await operators.createAgent({ handle, demo });
    if (!created.ok) throw new Error(`seed: ${created.error.message}`);
    return { handle, agentId: created.value.agent.id, demo, records, secret: created.value.apiKey.secret };
  };
  const whale = await make(`${prefix}-whale`, false, o.whale);
  const small: SeededAgent[] = [];
  for (let i = 0; i < o.smallAgents; i++) small.push(await make(`${prefix}-small-${i}`, i === o.smallAgents - 1 && o.smallAgents > 1, o.perSmall));

  let signer: { id: string; sign: (payload: string) => string } | null = null;
  let signingKey: SeedResult['signingKey'] = null;
  if (o.signedEvery && o.signedEvery > 0) {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'jwk' }).x!;
    const key = await store.createSigningKey({ id: `aid_${monotonicFactory()()}`, agentId: whale.agentId, publicKey: raw, label: 'seed', createdAt: new Date().toISOString(), revokedAt: null });
    signer = { id: key.id, sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64url') };
    signingKey = { id: key.id, publicKey: raw };
  }

  const total = o.whale + o.smallAgents * o.perSmall;
  const startMs = o.startMs ?? Date.now() - 3_600_000 - total;
  // Small agents' records are spread evenly through the whale's.
  const stride = o.smallAgents * o.perSmall > 0 ? Math.max(1, Math.floor(total / (o.smallAgents * o.perSmall))) : Infinity;
  const chains = new Map<string, Chain>([whale, ...small].map((a) => [a.agentId, { agent: a, seq: 0, prevHash: GENESIS_PREV_HASH, prevRecordedAt: null, signed: 0 }]));
  const smallLeft = small.map((a) => a.records);
  // Math.random is enough for the random half of a seeded id (the time half orders it); ulid's
  // default source costs a crypto call per character.
  const nextUlid = monotonicFactory(Math.random);
  const writer = writerFor(store);

  let batch: { record: StoredRecord; nonce: string | null }[] = [];
  let smallTurn = 0;
  for (let i = 0; i < total; i++) {
    let owner = whale;
    if ((i + 1) % stride === 0) {
      for (let k = 0; k < small.length; k++) {
        const j = (smallTurn + k) % small.length;
        if (smallLeft[j]! > 0) {
          owner = small[j]!;
          smallLeft[j]!--;
          smallTurn = j + 1;
          break;
        }
      }
    }
    if (owner === whale && chains.get(whale.agentId)!.seq >= o.whale) {
      owner = small[smallLeft.findIndex((n) => n > 0)]!;
      smallLeft[small.indexOf(owner)]!--;
    }
    const chain = chains.get(owner.agentId)!;
    const seq = chain.seq + 1;
    const timeMs = startMs + i;
    const recordedAt = new Date(timeMs).toISOString();
    const id = `dec_${nextUlid(timeMs)}`;
    const signed = signer !== null && owner === whale && seq % o.signedEvery! === 0;
    const nonce = signed ? `seed-nonce-${seq}` : undefined;
    const content = contentOf(owner.handle, i, nonce);
    const contentHash = sha256Hex(content);
    const signature: SignatureEnvelope | null = signed ? { key_id: signer!.id, nonce: nonce!, signature: signer!.sign(content) } : null;
    const hash = chainHash({ agent: owner.handle, seq, id, type: 'decision', recordedAt, contentHash, prevHash: chain.prevHash, signature });
    batch.push({
      record: {
        id, agentId: owner.agentId, agentHandle: owner.handle, type: 'decision', chainSeq: seq, recordedAt,
        symbol: SYMBOLS[i % SYMBOLS.length]!, content, contentHash, prevHash: chain.prevHash, chainHash: hash, signature,
        linkToken: `lt_seed_${sortKeyOf(id).toLowerCase()}`,
      },
      nonce: nonce ?? null,
    });
    chain.seq = seq;
    chain.prevHash = hash;
    chain.prevRecordedAt = recordedAt;
    if (signed) chain.signed += 1;
    if (batch.length === BATCH || i === total - 1) {
      await writer.insert(batch, [...chains.values()]);
      o.onProgress?.(i + 1, total);
      batch = [];
    }
  }
  return { whale, small, total, signingKey };
}

type Writer = { insert: (rows: { record: StoredRecord; nonce: string | null }[], heads: Chain[]) => Promise<void> };

function writerFor(store: LedgerStore): Writer {
  return store instanceof SqliteStore ? sqliteWriter(store) : postgresWriter(store as PostgresStore);
}

function sqliteWriter(store: SqliteStore): Writer {
  const db = store.db;
  const insertRecord = db.prepare(INSERT_RECORD_SQLITE);
  const insertNonce = db.prepare('INSERT INTO nonces (agent_id, nonce, record_id) VALUES (?, ?, ?)');
  const updateHead = db.prepare('UPDATE chain_heads SET seq = ?, hash = ?, recorded_at = ?, decision_count = ?, signed_count = ? WHERE agent_id = ?');
  const write = db.transaction((rows: { record: StoredRecord; nonce: string | null }[], heads: Chain[]) => {
    for (const { record: r, nonce } of rows) {
      insertRecord.run(...recordParams(r));
      if (nonce) insertNonce.run(r.agentId, nonce, r.id);
    }
    for (const h of heads) if (h.seq > 0) updateHead.run(h.seq, h.prevHash, h.prevRecordedAt, h.seq, h.signed, h.agent.agentId);
  });
  return { insert: async (rows, heads) => write.immediate(rows, heads) };
}

function postgresWriter(store: PostgresStore): Writer {
  return {
    insert: async (rows, heads) => {
      const client = await store.pool.connect();
      try {
        await client.query('BEGIN');
        await insertRecords(client, rows.map((x) => x.record));
        const signed = rows.filter((x) => x.nonce);
        if (signed.length > 0) {
          await client.query('INSERT INTO nonces (agent_id, nonce, record_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])',
            [signed.map((x) => x.record.agentId), signed.map((x) => x.nonce), signed.map((x) => x.record.id)]);
        }
        const moved = heads.filter((h) => h.seq > 0);
        await client.query(
          `UPDATE chain_heads h SET seq = v.seq, hash = v.hash, recorded_at = v.recorded_at, decision_count = v.seq, signed_count = v.signed
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS v(agent_id, seq, hash, recorded_at, signed)
           WHERE h.agent_id = v.agent_id`,
          [moved.map((h) => h.agent.agentId), moved.map((h) => h.seq), moved.map((h) => h.prevHash), moved.map((h) => h.prevRecordedAt),
            moved.map((h) => h.signed)]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      } finally {
        client.release();
      }
    },
  };
}
