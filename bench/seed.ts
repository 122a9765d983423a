// Bulk seeding for read benchmarks: agents and signing keys through the operators' and agents'
// own use cases, then valid chains written straight into the tables by this module's own SQL in
// big transactions, with real canon_v1 content and chain hashes computed by the core, so a
// million records take minutes, not the hours the HTTP path would need. The SQL here is the
// bench's: it writes the columns of the schema (src/store/*/migrations.ts) and no store code.
// The layout: one "whale" agent holding most records (its export is the big one), a few small
// agents (one of them demo) interleaved in time, all on one timeline one millisecond apart.
import { generateKeyPairSync, sign } from 'node:crypto';
import pg from 'pg';
import { monotonicFactory } from 'ulid';
import { canonicalJson } from '../src/core/canon.ts';
import { chainHash, GENESIS_PREV_HASH, type SignatureEnvelope } from '../src/core/chain.ts';
import { decisionContent } from '../src/core/decision.ts';
import { sha256Hex } from '../src/core/sha256.ts';
import { systemClock } from '../src/domain/clock.ts';
import { SigningKeys } from '../src/ledger/keys.ts';
import { Operators } from '../src/ledger/operators.ts';
import type { LedgerStore } from '../src/store/port.ts';
import Database from '../src/store/sqlite/driver.ts';

export type SeedOptions = {
  /** Records of the whale agent. */
  whale: number;
  /** Small agents, each with `perSmall` records; the last one is a demo agent. */
  smallAgents: number;
  perSmall: number;
  /** Every n-th whale record is agent-signed (0: none). */
  signedEvery?: number;
  /** recorded_at of the first record; records follow `spacingMs` apart. Default: whole timeline ends an hour ago. */
  startMs?: number;
  /** Milliseconds between consecutive records (default 1). */
  spacingMs?: number;
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

/** A records row as the schema has it (the migrations of both stores), in INSERT_COLUMNS order. */
type RecordRow = [id: string, sortKey: string, agentId: string, type: 'decision', chainSeq: number, recordedAt: string,
  symbol: string, content: string, contentHash: string, prevHash: string, chainHash: string, signature: string | null, linkToken: string];
type SeedRow = { record: RecordRow; nonce: string | null };

const INSERT_COLUMNS = 'id, sort_key, agent_id, type, chain_seq, recorded_at, symbol, content, content_hash, prev_hash, chain_hash, signature, link_token';

/**
 * Seeds the ledger at `databaseUrl` (the one `store` is open on, migrated): agents through
 * Operators, the whale's signing key through SigningKeys, then the records by this module's SQL.
 */
export async function seed(store: LedgerStore, databaseUrl: string, o: SeedOptions): Promise<SeedResult> {
  const prefix = o.handlePrefix ?? 'bench';
  const operators = new Operators(store, systemClock);
  const make = async (handle: string, demo: boolean, records: number) => {
    const created = await operators.createAgent({ handle, demo });
    if (!created.ok) throw new Error(`seed: ${created.error.message}`);
    const seeded: SeededAgent = { handle, agentId: created.value.agent.id, demo, records, secret: created.value.apiKey.secret };
    return { seeded, agent: created.value.agent };
  };
  const whaleMade = await make(`${prefix}-whale`, false, o.whale);
  const whale = whaleMade.seeded;
  const small: SeededAgent[] = [];
  for (let i = 0; i < o.smallAgents; i++) small.push((await make(`${prefix}-small-${i}`, i === o.smallAgents - 1 && o.smallAgents > 1, o.perSmall)).seeded);

  let signer: { id: string; sign: (payload: string) => string } | null = null;
  let signingKey: SeedResult['signingKey'] = null;
  if (o.signedEvery && o.signedEvery > 0) {
    const { publicKey, privateKey } = generateKeyPairSync('ed25519');
    const raw = publicKey.export({ format: 'jwk' }).x!;
    const registered = await new SigningKeys(store, systemClock).register(whaleMade.agent, { publicKey: raw, label: 'seed' });
    if (!registered.ok) throw new Error(`seed: ${registered.error.message}`);
    const keyId = registered.value.key.id;
    signer = { id: keyId, sign: (payload) => sign(null, Buffer.from(payload, 'utf8'), privateKey).toString('base64url') };
    signingKey = { id: keyId, publicKey: raw };
  }

  const total = o.whale + o.smallAgents * o.perSmall;
  const spacing = o.spacingMs ?? 1;
  const startMs = o.startMs ?? Date.now() - 3_600_000 - total * spacing;
  // Small agents' records are spread evenly through the whale's.
  const stride = o.smallAgents * o.perSmall > 0 ? Math.max(1, Math.floor(total / (o.smallAgents * o.perSmall))) : Infinity;
  const chains = new Map<string, Chain>([whale, ...small].map((a) => [a.agentId, { agent: a, seq: 0, prevHash: GENESIS_PREV_HASH, prevRecordedAt: null, signed: 0 }]));
  const smallLeft = small.map((a) => a.records);
  // Math.random is enough for the random half of a seeded id (the time half orders it); ulid's
  // default source costs a crypto call per character.
  const nextUlid = monotonicFactory(Math.random);
  const writer = await writerFor(databaseUrl);

  try {
    let batch: SeedRow[] = [];
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
      const timeMs = startMs + i * spacing;
      const recordedAt = new Date(timeMs).toISOString();
      const sortKey = nextUlid(timeMs);
      const id = `dec_${sortKey}`;
      const signed = signer !== null && owner === whale && seq % o.signedEvery! === 0;
      const nonce = signed ? `seed-nonce-${seq}` : undefined;
      const content = contentOf(owner.handle, i, nonce);
      const contentHash = sha256Hex(content);
      const signature: SignatureEnvelope | null = signed ? { key_id: signer!.id, nonce: nonce!, signature: signer!.sign(content) } : null;
      const hash = chainHash({ agent: owner.handle, seq, id, type: 'decision', recordedAt, contentHash, prevHash: chain.prevHash, signature });
      batch.push({
        record: [id, sortKey, owner.agentId, 'decision', seq, recordedAt, SYMBOLS[i % SYMBOLS.length]!, content, contentHash,
          chain.prevHash, hash, signature ? JSON.stringify(signature) : null, `lt_seed_${sortKey.toLowerCase()}`],
        nonce: nonce ?? null,
      });
      chain.seq = seq;
      chain.prevHash = hash;
      chain.prevRecordedAt = recordedAt;
      if (signed) chain.signed += 1;
      if (batch.length === BATCH || i === total - 1) {
        await writer.insert(batch, [...chains.values()].filter((h) => h.seq > 0));
        o.onProgress?.(i + 1, total);
        batch = [];
      }
    }
    // Fresh statistics after the bulk load, as autovacuum (PostgreSQL) or an operator (SQLite) would.
    await writer.analyse();
  } finally {
    await writer.close();
  }
  return { whale, small, total, signingKey };
}

/** Writes seeded rows on a connection of its own; every insert is one transaction. */
type Writer = {
  insert: (rows: SeedRow[], heads: Chain[]) => Promise<void>;
  analyse: () => Promise<void>;
  close: () => Promise<void>;
};

async function writerFor(databaseUrl: string): Promise<Writer> {
  if (databaseUrl.startsWith('sqlite:')) return sqliteWriter(databaseUrl.slice('sqlite:'.length));
  return postgresWriter(databaseUrl);
}

function sqliteWriter(path: string): Writer {
  const db = new Database(path);
  db.pragma('busy_timeout = 5000');
  const insertRecord = db.prepare(`INSERT INTO records (${INSERT_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`);
  const insertNonce = db.prepare('INSERT INTO nonces (agent_id, nonce, record_id) VALUES (?, ?, ?)');
  const updateHead = db.prepare('UPDATE chain_heads SET seq = ?, hash = ?, recorded_at = ?, decision_count = ?, signed_count = ? WHERE agent_id = ?');
  const write = db.transaction((rows: SeedRow[], heads: Chain[]) => {
    for (const { record, nonce } of rows) {
      insertRecord.run(...record);
      if (nonce) insertNonce.run(record[2], nonce, record[0]);
    }
    for (const h of heads) updateHead.run(h.seq, h.prevHash, h.prevRecordedAt, h.seq, h.signed, h.agent.agentId);
  });
  return {
    insert: async (rows, heads) => write.immediate(rows, heads),
    analyse: async () => void db.exec('ANALYZE'),
    close: async () => void db.close(),
  };
}

/** `postgres://...[?schema=<name>]`, the URL form the service takes. */
async function postgresWriter(databaseUrl: string): Promise<Writer> {
  const url = new URL(databaseUrl);
  const schema = url.searchParams.get('schema') ?? 'public';
  url.searchParams.delete('schema');
  const client = new pg.Client({ connectionString: url.toString(), options: `-c search_path=${schema}` });
  await client.connect();
  const column = <T>(rows: SeedRow[], i: number) => rows.map((x) => x.record[i] as T);
  const types = ['text', 'text', 'text', 'text', 'bigint', 'text', 'text', 'text', 'text', 'text', 'text', 'text', 'text'];
  const insertRecords = `INSERT INTO records (${INSERT_COLUMNS})
    SELECT * FROM unnest(${types.map((t, i) => `$${i + 1}::${t}[]`).join(', ')})`;
  return {
    insert: async (rows, heads) => {
      try {
        await client.query('BEGIN');
        await client.query(insertRecords, types.map((_, i) => column(rows, i)));
        const signed = rows.filter((x) => x.nonce);
        if (signed.length > 0) {
          await client.query('INSERT INTO nonces (agent_id, nonce, record_id) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])',
            [signed.map((x) => x.record[2]), signed.map((x) => x.nonce), signed.map((x) => x.record[0])]);
        }
        await client.query(
          `UPDATE chain_heads h SET seq = v.seq, hash = v.hash, recorded_at = v.recorded_at, decision_count = v.seq, signed_count = v.signed
           FROM unnest($1::text[], $2::bigint[], $3::text[], $4::text[], $5::bigint[]) AS v(agent_id, seq, hash, recorded_at, signed)
           WHERE h.agent_id = v.agent_id`,
          [heads.map((h) => h.agent.agentId), heads.map((h) => h.seq), heads.map((h) => h.prevHash), heads.map((h) => h.prevRecordedAt),
            heads.map((h) => h.signed)]);
        await client.query('COMMIT');
      } catch (err) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw err;
      }
    },
    analyse: async () => void await client.query('ANALYZE'),
    close: () => client.end(),
  };
}
