// The public reads (interface section 4, endpoints 5 to 10): the agent profile, chain pages,
// proof bundles, ledger pages, the export stream and the transparency document.
// Owns what a third party sees of the record and that it is enough to verify it with canon_v1
// alone: every record is shown as its canon_v1 chain entry (exactly the members chain_hash
// covers), its chain_hash, and its content as the canonical string content_hash covers.
// Bodies that carry many records are built as JSON text directly: the stored content is
// already canon_v1 output, so it is embedded without parsing or re-serialising.
import { canonicalJson } from '../core/canon.ts';
import { CANON, chainEntry, type RecordType } from '../core/chain.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { Agent, ChainHead, SigningKey, StoredRecord } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';
import { sortKeyOf } from '../store/rows.ts';
import { errors, fail, ok, type Result } from './errors.ts';
import { isRecordId } from './ids.ts';
import { HANDLE_PATTERN } from './operators.ts';

const HANDLE = new RegExp(HANDLE_PATTERN);

/** Records per store query when a chain is streamed (export). */
export const EXPORT_PAGE = 1000;

export const EXPORT_FORMAT = 'ledger-export-ndjson-v1';

// ---------------------------------------------------------------------------------------------
// Shared pieces of every view

export function headView(head: ChainHead) {
  return { seq: head.seq, chain_hash: head.hash, recorded_at: head.recordedAt };
}

export type KeyStatus = 'active' | 'revoked';

export function publicKeyView(key: SigningKey) {
  return {
    id: key.id,
    public_key: key.publicKey,
    label: key.label,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
    status: (key.revokedAt === null ? 'active' : 'revoked') as KeyStatus,
  };
}

/** canon_v1(chain entry) of a stored record: the exact text whose sha256 is its chain_hash. */
export function entryText(r: StoredRecord): string {
  return canonicalJson(chainEntry({
    agent: r.agentHandle, seq: r.chainSeq, id: r.id, type: r.type, recordedAt: r.recordedAt,
    contentHash: r.contentHash, prevHash: r.prevHash, signature: r.signature,
  }));
}

export type RecordShape = {
  /** Include `content` (the canonical string). */
  payloads: boolean;
  /** Also include `document` (the same content as a JSON object, for convenience). */
  document: boolean;
};

/**
 * One record as JSON text: `{"entry":{...},"chain_hash":"...","content":"...","document":{...}}`.
 * `entry` is written in canon_v1 form, so its bytes are those chain_hash covers; `content` is the
 * stored canonical string, `document` the same text embedded as an object.
 */
export function recordJson(r: StoredRecord, shape: RecordShape, extra = ''): string {
  let s = `{"entry":${entryText(r)},"chain_hash":${JSON.stringify(r.chainHash)}`;
  if (shape.payloads) {
    s += `,"content":${JSON.stringify(r.content)}`;
    if (shape.document) s += `,"document":${r.content}`;
  }
  return s + extra + '}';
}

// ---------------------------------------------------------------------------------------------

export type ChainPageQuery = { handle: string; afterSeq: number; limit: number; payloads: boolean };
export type LedgerPageQuery = {
  limit: number;
  cursor?: string | undefined;
  symbol?: string | undefined;
  agent?: string | undefined;
  type?: RecordType | undefined;
  includeDemo: boolean;
};

/** A JSON body built as text, with what the HTTP layer needs to cache it. */
export type JsonText = { body: string };

/** Records kept rendered (ledger items and proofs): records never change, so neither does their text. */
const RENDERED_CACHE = 10_000;

export class PublicReads {
  private readonly rendered = new Map<string, string>();

  constructor(private readonly store: LedgerStore, private readonly baseUrl: string) {}

  /** recordJson with content and document, from the cache when this record was rendered before. */
  private fullRecordJson(r: StoredRecord): string {
    let text = this.rendered.get(r.id);
    if (text === undefined) {
      text = recordJson(r, { payloads: true, document: true });
      if (this.rendered.size >= RENDERED_CACHE) this.rendered.delete(this.rendered.keys().next().value!);
      this.rendered.set(r.id, text);
    }
    return text;
  }

  /** The agent named by a public handle; malformed handles are simply unknown. */
  async agent(handle: string, param = 'handle'): Promise<Result<Agent>> {
    const agent = HANDLE.test(handle) ? await this.store.findAgentByHandle(handle) : null;
    return agent ? ok(agent) : fail(errors.notFound(`no agent with handle ${handle}`, param));
  }

  private url(path: string): string {
    return `${this.baseUrl}${path}`;
  }

  chainUrl(handle: string, q: { afterSeq?: number; limit?: number; payloads?: boolean } = {}): string {
    const params = new URLSearchParams();
    if (q.afterSeq !== undefined && q.afterSeq > 0) params.set('after_seq', String(q.afterSeq));
    if (q.limit !== undefined) params.set('limit', String(q.limit));
    if (q.payloads === false) params.set('payloads', 'false');
    const query = params.toString();
    return this.url(`/agents/${encodeURIComponent(handle)}/chain${query ? `?${query}` : ''}`);
  }

  exportUrl(handle: string): string {
    return this.url(`/export?agent=${encodeURIComponent(handle)}`);
  }

  proofUrl(id: string): string {
    return this.url(`/proof/${encodeURIComponent(id)}`);
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/agents/{handle}

  async profile(handle: string): Promise<Result<ReturnType<typeof profileView>>> {
    const found = await this.agent(handle);
    if (!found.ok) return found;
    const agent = found.value;
    const [head, counts, keys] = await Promise.all([
      this.store.chainHead(agent.id),
      this.store.countRecords(agent.id),
      this.store.listSigningKeys(agent.id),
    ]);
    return ok(profileView(agent, head, counts, keys, {
      chain: this.chainUrl(agent.handle),
      export: this.exportUrl(agent.handle),
    }));
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/agents/{handle}/chain

  async chainPage(q: ChainPageQuery): Promise<Result<JsonText>> {
    const found = await this.agent(q.handle);
    if (!found.ok) return found;
    const agent = found.value;
    // The head is read first and the page stops at it, so a page never shows a record its own
    // `head` does not cover, even while the agent records.
    const head = await this.store.chainHead(agent.id);
    const keys = await this.store.listSigningKeys(agent.id);
    const room = Math.max(0, Math.min(q.limit, head.seq - q.afterSeq));
    const records = room > 0 ? await this.store.listChain(agent.id, q.afterSeq, room) : [];
    const last = records.length > 0 ? records[records.length - 1]!.chainSeq : q.afterSeq;
    const hasMore = last < head.seq;
    const shape = { payloads: q.payloads, document: q.payloads };
    const meta = {
      object: 'chain',
      canonicalisation: CANON,
      algorithm: 'sha256',
      agent: agent.handle,
      head: headView(head),
      keys: keys.map(publicKeyView),
      payloads: q.payloads,
      limit: q.limit,
      after_seq: q.afterSeq,
    };
    const next = hasMore ? this.chainUrl(agent.handle, { afterSeq: last, limit: q.limit, payloads: q.payloads }) : null;
    const body = `${JSON.stringify(meta).slice(0, -1)},"records":[${records.map((r) => recordJson(r, shape)).join(',')}]` +
      `,"has_more":${hasMore},"next_after_seq":${hasMore ? last : 'null'},"next":${JSON.stringify(next)}}`;
    return ok({ body });
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/proof/{record_id}

  async proof(recordId: string): Promise<Result<JsonText>> {
    const record = isRecordId(recordId) ? await this.store.findRecord(recordId) : null;
    if (!record) return fail(errors.notFound(`no record ${recordId}`, 'record_id'));
    const [agent, head, key] = await Promise.all([
      this.store.findAgentById(record.agentId),
      this.store.chainHead(record.agentId),
      record.signature ? this.store.findSigningKey(record.agentId, record.signature.key_id) : Promise.resolve(null),
    ]);
    const meta = {
      object: 'proof',
      canonicalisation: CANON,
      algorithm: 'sha256',
      id: record.id,
      agent: {
        handle: record.agentHandle,
        status: agent?.status ?? null,
        demo: agent?.demo ?? false,
        head: headView(head),
      },
      key: key ? { ...publicKeyView(key), valid_for_record: keyValidAt(key, record.recordedAt) } : null,
      inclusion_proof: null,
      anchor_proof: null,
      links: {
        self: this.proofUrl(record.id),
        chain_from_here: this.chainUrl(record.agentHandle, { afterSeq: record.chainSeq - 1 }),
        export: this.exportUrl(record.agentHandle),
      },
    };
    const body = `${JSON.stringify(meta).slice(0, -1)},"record":${this.fullRecordJson(record)}}`;
    return ok({ body });
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/ledger

  async ledgerPage(q: LedgerPageQuery): Promise<Result<JsonText>> {
    let agentId: string | undefined;
    if (q.agent !== undefined) {
      const found = await this.agent(q.agent, 'agent');
      if (!found.ok) return found;
      if (found.value.demo && !q.includeDemo) {
        return fail(errors.invalidRequest(`agent ${q.agent} is a demo agent and demo records are hidden by default; pass include_demo=true to see them`, 'include_demo'));
      }
      agentId = found.value.id;
    }
    const rows = await this.store.listLedger({
      limit: q.limit + 1,
      beforeSortKey: q.cursor === undefined ? undefined : sortKeyOf(q.cursor),
      symbol: q.symbol,
      agentId,
      type: q.type,
      includeDemo: q.includeDemo,
    });
    const page = rows.slice(0, q.limit);
    const hasMore = rows.length > q.limit;
    const nextCursor = hasMore ? page[page.length - 1]!.id : null;
    const data = page.map((r) => `${this.fullRecordJson(r).slice(0, -1)},"proof_url":${JSON.stringify(this.proofUrl(r.id))}}`);
    const body = `{"object":"list","url":"/v1/ledger","data":[${data.join(',')}],"has_more":${hasMore}` +
      `,"next_cursor":${JSON.stringify(nextCursor)},"next":${JSON.stringify(nextCursor ? this.ledgerUrl(q, nextCursor) : null)}}`;
    return ok({ body });
  }

  private ledgerUrl(q: LedgerPageQuery, cursor: string): string {
    const params = new URLSearchParams({ limit: String(q.limit), cursor });
    if (q.symbol !== undefined) params.set('symbol', q.symbol);
    if (q.agent !== undefined) params.set('agent', q.agent);
    if (q.type !== undefined) params.set('type', q.type);
    if (q.includeDemo) params.set('include_demo', 'true');
    return this.url(`/ledger?${params.toString()}`);
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/export?agent=<handle>

  /**
   * The export of one agent: a header line, then one line per record in chain order up to the
   * head read at the start. Records are read EXPORT_PAGE at a time, one page per yielded chunk,
   * so memory stays flat however long the chain is. `etag` names the export's content.
   */
  async export(handle: string): Promise<Result<{ etag: string; lines: AsyncGenerator<string> }>> {
    const found = await this.agent(handle, 'agent');
    if (!found.ok) return found;
    const agent = found.value;
    const head = await this.store.chainHead(agent.id);
    const keys = await this.store.listSigningKeys(agent.id);
    const header = {
      object: 'export',
      format: EXPORT_FORMAT,
      canonicalisation: CANON,
      algorithm: 'sha256',
      agent: agentSummary(agent),
      keys: keys.map(publicKeyView),
      head: headView(head),
      records: head.seq,
      chain_url: this.chainUrl(agent.handle),
    };
    const headerText = JSON.stringify(header);
    const etag = `W/"${sha256Hex(headerText).slice(0, 32)}"`;
    const store = this.store;
    async function* lines(): AsyncGenerator<string> {
      yield headerText + '\n';
      for await (const page of chainPages(store, agent.id, 0, head.seq, EXPORT_PAGE)) {
        let chunk = '';
        for (const r of page) chunk += recordJson(r, { payloads: true, document: false }) + '\n';
        yield chunk;
      }
    }
    return ok({ etag, lines: lines() });
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/transparency

  async transparency(now: Date) {
    const [heads, counts] = await Promise.all([this.store.listHeads(), this.store.countRecords()]);
    return transparencyView(now, heads.map(({ agent, head }) => ({
      agent: agent.handle,
      demo: agent.demo,
      status: agent.status,
      ...headView(head),
    })), counts, this.baseUrl);
  }
}

/** The agent's records with afterSeq < seq <= toSeq, in chain order, `pageSize` per page. */
export async function* chainPages(store: LedgerStore, agentId: string, afterSeq: number, toSeq: number, pageSize: number): AsyncGenerator<StoredRecord[]> {
  let after = afterSeq;
  while (after < toSeq) {
    const page = await store.listChain(agentId, after, Math.min(pageSize, toSeq - after));
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.chainSeq;
  }
}

/** A key signs validly for a record unless it was revoked before the record's recorded_at. */
export function keyValidAt(key: SigningKey, recordedAt: string): boolean {
  return key.revokedAt === null || Date.parse(key.revokedAt) >= Date.parse(recordedAt);
}

function agentSummary(agent: Agent) {
  return {
    handle: agent.handle,
    display_name: agent.displayName,
    status: agent.status,
    demo: agent.demo,
    created_at: agent.createdAt,
  };
}

// ---------------------------------------------------------------------------------------------
// Profile and transparency documents

export type Caveat = { code: string; message: string };

export function profileView(
  agent: Agent,
  head: ChainHead,
  counts: { total: number; signed: number; byType: Record<RecordType, number> },
  keys: SigningKey[],
  links: { chain: string; export: string },
) {
  const caveats: Caveat[] = [
    {
      code: 'portfolio_not_computed',
      message: 'No model portfolio or broker portfolio is computed for this agent yet: portfolios is empty because nothing has been built from its records, not because it holds nothing.',
    },
    {
      code: 'performance_not_computed',
      message: 'No performance is computed for this agent yet: performance is null. Nothing on this profile states a return.',
    },
    {
      code: 'records_state_intent_only',
      message: 'A decision record proves what the agent said and when the service received it; it does not prove that a trade happened.',
    },
  ];
  if (agent.demo) {
    caveats.unshift({
      code: 'demo_agent',
      message: 'This is a demo agent: its records are for demonstration and are hidden from the public ledger unless include_demo=true.',
    });
  }
  return {
    object: 'agent_profile' as const,
    id: agent.handle,
    handle: agent.handle,
    display_name: agent.displayName,
    status: agent.status,
    demo: agent.demo,
    created_at: agent.createdAt,
    chain: { head: headView(head), url: links.chain, export_url: links.export },
    counts: { records: counts.total, decision: counts.byType.decision, execution: counts.byType.execution, signed: counts.signed },
    signing_keys: keys.map(publicKeyView),
    portfolios: [] as never[],
    performance: null,
    caveats,
  };
}

export type HeadPin = { agent: string; demo: boolean; status: string; seq: number; chain_hash: string; recorded_at: string | null };

export const GUARANTEES = [
  {
    name: 'hash_chain',
    covers: 'Every record is hashed on receipt (content_hash over its canon_v1 content) and linked into its agent\'s chain (chain_hash over the chain entry, which carries the previous chain_hash). Changing, removing, inserting or reordering any record of a chain changes every later chain_hash, so it no longer matches a head you pinned.',
    does_not_cover: 'A chain head you have not pinned: until a head is pinned by you or anchored, the service could present a different history from the start. Pin the heads below (and compare them later with `ledger verify --pin`). The hashes say nothing about whether a decision was wise, true or acted on.',
  },
  {
    name: 'service_clock',
    covers: 'recorded_at is the service\'s own clock when the record was chained; it never decreases along a chain and it orders records (interface rule 2).',
    does_not_cover: 'occurred_at is the agent\'s own claim and is information only: nothing is computed from it (rule 6).',
  },
  {
    name: 'agent_signature',
    covers: 'An agent-signed record carries an Ed25519 signature over exactly its canon_v1 content, verifiable under the public key published on the agent\'s profile, which was not revoked before the record\'s recorded_at.',
    does_not_cover: 'Unsigned records are attested by the service alone. A signature proves possession of the key, not who holds it, nor the time it was made.',
  },
  {
    name: 'execution_links',
    covers: 'A fill whose broker order carries the decision\'s link_token is linked to that decision deterministically.',
    does_not_cover: 'Links made without a link token (matched by symbol, side and timing, and every link through the broker aggregator) are labelled inferred and never count as verification (rule 4). Until broker sync imports executions, no record is linked; the execution count below says how many exist.',
  },
  {
    name: 'model_portfolios',
    covers: 'Model portfolios price every decision at the moment the service received it (rule 6).',
    does_not_cover: 'They do not price at occurred_at, and they are models, not broker statements. Profiles show no portfolio until one is computed, and say so in their caveats.',
  },
  {
    name: 'broker_performance',
    covers: 'Broker-verified performance is derived from imported trades (orders and fills).',
    does_not_cover: 'Connected-broker imports do not yet include deposits, withdrawals or dividends, so a broker-verified curve is trade-derived and says so (rule 7). Profiles show no performance until it is computed, and say so in their caveats.',
  },
  {
    name: 'anchoring',
    covers: 'Chain roots are to be anchored to a public blockchain; once a root is anchored, the heads it covers cannot be rewritten without the anchor showing it (rule 8). Early batches take hours to confirm.',
    does_not_cover: 'This service does not yet publish anchored roots: the anchoring section below says so and counts none. Until it does, the chain heads below are the only pins.',
  },
] as const;

export function transparencyView(
  now: Date,
  heads: HeadPin[],
  counts: { total: number; signed: number; byType: Record<RecordType, number> },
  baseUrl: string,
) {
  const demo = heads.filter((h) => h.demo);
  return {
    object: 'transparency' as const,
    generated_at: now.toISOString(),
    canonicalisation: 'canon_v1' as const,
    algorithm: 'sha256' as const,
    counts: {
      agents: heads.length,
      demo_agents: demo.length,
      records: counts.total,
      decision: counts.byType.decision,
      execution: counts.byType.execution,
      signed: counts.signed,
    },
    heads,
    anchoring: {
      live: false,
      anchored_roots: 0,
      pending_roots: 0,
      roots: [] as never[],
      note: 'The global log and its blockchain anchoring do not yet publish roots on this service; no chain head is anchored yet.',
    },
    guarantees: GUARANTEES.map((g) => ({ ...g })),
    how_to_verify: `Pin the heads above. Later, fetch ${baseUrl}/export?agent=<handle> (or ${baseUrl}/agents/<handle>/chain) and run \`ledger verify <file or URL> --pin <seq>:<chain_hash>\`: it recomputes every hash with canon_v1 and checks that the pinned head is still in the chain.`,
  };
}
