// The public reads (interface section 4, endpoints 5 to 10): the agent profile, chain pages,
// proof bundles, ledger pages, the export stream and the transparency document.
// Owns what a third party sees of the record and that it is enough to verify it with canon_v1
// alone: every record is shown as its canon_v1 chain entry (exactly the members chain_hash
// covers), its chain_hash, and its content as the canonical string content_hash covers.
// The reads return values; the HTTP edge writes them as text (api/routes/public/bodies.ts). A page
// of records is bounded in the characters of its records' JSON text (record-text.ts), so it is
// measured by rendering them, and carries those texts for the edge to write as they are. The
// documents (documents.ts), addresses (urls.ts) and guarantee prose (guarantees.ts) live beside it.
import { CANON, type RecordType } from '../../core/chain.ts';
import type { Agent, AgentStatus, StoredRecord } from '../../domain/types.ts';
import type { LedgerQuery, LedgerStore } from '../../store/port.ts';
import { sortKeyOf } from '../../core/chain.ts';
import { errors, fail, ok, type Result } from '../../domain/errors.ts';
import { isRecordId } from '../ids.ts';
import { isHandle } from '../../domain/handle.ts';
import { agentSummary, headView, keyValidAt, profileView, publicKeyView, transparencyView, type ProfileSections } from './documents.ts';
import { recordJson, type RecordShape } from './record-text.ts';
import { PublicUrls } from './urls.ts';
import { ReadSources, type ReplicaOptions } from './sources.ts';
import { readPacer } from '../../runtime/loop-share.ts';

/**
 * Records per store query when a chain is streamed (export), and their content at most: a query
 * ends early, after the record that passes EXPORT_PAGE_BYTES, so an export holds about a MiB of
 * records however large they are.
 */
export const EXPORT_PAGE = 1000;
export const EXPORT_PAGE_BYTES = 1024 * 1024;

export const EXPORT_FORMAT = 'ledger-export-ndjson-v1';

export type ChainPageQuery = { handle: string; afterSeq: number; limit: number; payloads: boolean };
export type LedgerPageQuery = {
  limit: number;
  cursor?: string | undefined;
  symbol?: string | undefined;
  agent?: string | undefined;
  type?: RecordType | undefined;
  includeDemo: boolean;
};

/**
 * What a wing adds to an export, outside every hashed byte (the market wing's price observations):
 * members of the header (they name the export's content, so they count in its ETag), and for each
 * page of records the members each record's line gains (null: none).
 */
export type ExportAnnotations = {
  header(agentId: string, throughSeq: number): Promise<Record<string, unknown>>;
  page(records: readonly StoredRecord[]): Promise<(r: StoredRecord) => Record<string, unknown> | null>;
};

type HeadView = ReturnType<typeof headView>;
type KeyView = ReturnType<typeof publicKeyView>;

/** A record of a ledger page, and the address of its proof. */
export type LedgerItem = { record: StoredRecord; proofUrl: string };

/**
 * A page of /v1/ledger: its records newest first, and the cursor of the next page (null on the
 * last) with its address. `texts` are the items' JSON texts, one each, rendered as the page was
 * measured against PAGE_CHAR_BUDGET: the HTTP edge writes them as they are.
 */
export type LedgerPage = { items: LedgerItem[]; hasMore: boolean; nextCursor: string | null; next: string | null; texts: string[] };

/** What a chain page shows before its records, as published. */
export type ChainDocument = {
  object: 'chain'; canonicalisation: string; algorithm: 'sha256'; agent: string; head: HeadView; keys: KeyView[];
  payloads: boolean; limit: number; after_seq: number;
};

/**
 * A page of an agent's chain: its records in chain order, up to the head read first
 * (`document.head`). `lastSeq` is the last one's seq (after_seq when none): the next page starts
 * after it. `texts` as a ledger page's.
 */
export type ChainPage = { document: ChainDocument; records: StoredRecord[]; hasMore: boolean; lastSeq: number; next: string | null; texts: string[] };

/** A proof bundle's members but its record, in the order published; the sections other wings add follow `links`. */
export type ProofDocument = {
  object: 'proof'; canonicalisation: string; algorithm: 'sha256'; id: string;
  agent: { handle: string; status: AgentStatus | null; demo: boolean; head: HeadView };
  key: (KeyView & { valid_for_record: boolean }) | null;
  links: { self: string; chain_from_here: string; export: string };
  [section: string]: unknown;
};

/** A proof bundle: its document, its record, and the record's JSON text (records never change: it is kept rendered). */
export type Proof = { document: ProofDocument; record: StoredRecord; recordText: string };

/** A page of an export: its records, and the members the annotations add to each line. */
export type ExportPage = { records: StoredRecord[]; members: (r: StoredRecord) => Record<string, unknown> | null };

/**
 * An export: its header (it names the export's content, so the ETag is taken over it), then the
 * records in chain order up to the head read at the start, a page at a time as they are asked for.
 */
export type Export = { header: Record<string, unknown>; pages: AsyncGenerator<ExportPage> };

/**
 * Records kept rendered (ledger items and proofs): records never change, so neither does their
 * text. Bounded in characters as well as in records: one record's text can be half a megabyte.
 */
const RENDERED_CACHE = { records: 10_000, chars: 32 * 1024 * 1024 };

/**
 * A page of records stops early, with its cursor, once its records' text passes this many
 * characters (it always holds at least one record), so no anonymous read builds a body of more
 * than a few megabytes however large the records or the limit. A chain page also counts the
 * content it reads and does not show (payloads=false), and reads no further than the budget.
 */
export const PAGE_CHAR_BUDGET = 1024 * 1024;

/** Records read from the store per query while a page is built: memory grows with the page, not the limit. */
const PAGE_READ_CHUNK = 100;

/**
 * Content bytes one store query of a page reads at most. On SQLite a query runs on the event
 * loop, so a page of large records is read in slices, with a turn of the read pacer between
 * them (runtime/loop-share.ts): a write waits for a slice, not for a page.
 */
const READ_SLICE_BYTES = 128 * 1024;

/**
 * Content bytes worth reading for `chars` of page budget, in one slice at most: a record shown
 * with its `document` carries its content twice (`content` and `document`), so half. Reading by
 * this bound reads about the records the page shows (it never changes which: a page not yet full
 * reads on).
 */
function contentBudget(chars: number, twice: boolean): number {
  return Math.max(1, Math.min(READ_SLICE_BYTES, twice ? Math.ceil(chars / 2) : chars));
}

export class PublicReads {
  private readonly rendered = new Map<string, string>();
  private renderedChars = 0;

  readonly urls: PublicUrls;
  /** The store each read runs on: the primary, or a read replica in front of it (sources.ts). */
  private readonly sources: ReadSources;

  constructor(store: LedgerStore, private readonly baseUrl: string, replica: ReplicaOptions = { replica: null }) {
    this.urls = new PublicUrls(baseUrl);
    this.sources = new ReadSources(store, replica);
  }

  /** recordJson with content and document, from the cache when this record was rendered before. */
  private fullRecordJson(r: StoredRecord): string {
    let text = this.rendered.get(r.id);
    if (text === undefined) {
      text = recordJson(r, { payloads: true, document: true });
      this.remember(r.id, text);
    }
    return text;
  }

  private remember(id: string, text: string): void {
    if (text.length > RENDERED_CACHE.chars / 64) return; // a few huge records must not empty the cache
    while (this.rendered.size > 0 && (this.rendered.size >= RENDERED_CACHE.records || this.renderedChars + text.length > RENDERED_CACHE.chars)) {
      const [oldest, oldText] = this.rendered.entries().next().value!;
      this.rendered.delete(oldest);
      this.renderedChars -= oldText.length;
    }
    this.rendered.set(id, text);
    this.renderedChars += text.length;
  }

  /** The agent named by a public handle, and the store that knows it; malformed handles are simply unknown. */
  private async agent(store: LedgerStore, handle: string, param = 'handle'): Promise<Result<{ agent: Agent; store: LedgerStore }>> {
    const found = isHandle(handle) ? await this.sources.agentByHandle(store, handle) : null;
    return found ? ok({ agent: found.value, store: found.store }) : fail(errors.notFound(`no agent with handle ${handle}`, param));
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/agents/{handle}

  async recordExists(id: string): Promise<boolean> {
    return this.sources.read(async (store) => (await this.sources.record(store, id)) !== null);
  }

  /** The agent named by a public handle (404 `not_found` otherwise), for the reads other wings serve. */
  agentByHandle(handle: string, param = 'handle'): Promise<Result<Agent>> {
    return this.sources.read(async (store) => {
      const found = await this.agent(store, handle, param);
      return found.ok ? ok(found.value.agent) : found;
    });
  }

  /** `sections` adds what other wings compute from the records (portfolios and performance). */
  profile(handle: string, sections?: (agent: Agent) => Promise<ProfileSections>): Promise<Result<ReturnType<typeof profileView>>> {
    return this.sources.read((store) => this.profileOn(store, handle, sections));
  }

  private async profileOn(replicaOrPrimary: LedgerStore, handle: string, sections?: (agent: Agent) => Promise<ProfileSections>): Promise<Result<ReturnType<typeof profileView>>> {
    const found = await this.agent(replicaOrPrimary, handle);
    if (!found.ok) return found;
    const { agent, store } = found.value;
    const [head, counts, keys, extra] = await Promise.all([
      store.chainHead(agent.id),
      store.countRecords(agent.id),
      store.listSigningKeys(agent.id),
      sections ? sections(agent) : Promise.resolve(null),
    ]);
    return ok(profileView(agent, head, counts, keys, {
      chain: this.urls.chainUrl(agent.handle),
      export: this.urls.exportUrl(agent.handle),
    }, extra));
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/agents/{handle}/chain

  chainPage(query: ChainPageQuery): Promise<Result<ChainPage>> {
    return this.sources.read((store) => this.chainPageOn(store, query));
  }

  private async chainPageOn(replicaOrPrimary: LedgerStore, query: ChainPageQuery): Promise<Result<ChainPage>> {
    const found = await this.agent(replicaOrPrimary, query.handle);
    if (!found.ok) return found;
    const { agent } = found.value;
    // The head is read first and the page stops at it, so a page never shows a record its own
    // `head` does not cover, even while the agent records.
    const { value: head, store } = await this.sources.chain(found.value.store, agent.id, query.afterSeq);
    const keys = await store.listSigningKeys(agent.id);
    const room = Math.max(0, Math.min(query.limit, head.seq - query.afterSeq));
    const shape = { payloads: query.payloads, document: query.payloads };
    const { records, texts } = await this.chainTexts(store, agent.id, query.afterSeq, room, shape, (r) => recordJson(r, shape));
    const last = records.at(-1)?.chainSeq ?? query.afterSeq;
    const hasMore = last < head.seq;
    const document: ChainDocument = {
      object: 'chain',
      canonicalisation: CANON,
      algorithm: 'sha256',
      agent: agent.handle,
      head: headView(head),
      keys: keys.map(publicKeyView),
      payloads: query.payloads,
      limit: query.limit,
      after_seq: query.afterSeq,
    };
    const next = hasMore ? this.urls.chainUrl(agent.handle, { afterSeq: last, limit: query.limit, payloads: query.payloads }) : null;
    return ok({ document, records, hasMore, lastSeq: last, next, texts });
  }

  /**
   * Up to `room` records after `afterSeq`, rendered, read a chunk at a time, within the page
   * budget. A record costs its text or its content, whichever is longer (a page without payloads
   * still reads them), and each read stops at the content worth what is left of the budget.
   */
  private async chainTexts(store: LedgerStore, agentId: string, afterSeq: number, room: number, shape: RecordShape, render: (r: StoredRecord) => string) {
    const records: StoredRecord[] = [];
    const texts: string[] = [];
    let cost = 0;
    let last = afterSeq;
    while (texts.length < room && (texts.length === 0 || cost < PAGE_CHAR_BUDGET)) {
      if (texts.length > 0) await readPacer.turn();
      const bytes = contentBudget(PAGE_CHAR_BUDGET - cost, shape.payloads && shape.document);
      const chunk = await store.listChain(agentId, last, Math.min(PAGE_READ_CHUNK, room - texts.length), bytes);
      if (chunk.length === 0) break;
      for (const r of chunk) {
        if (texts.length > 0 && cost >= PAGE_CHAR_BUDGET) break;
        const text = render(r);
        records.push(r);
        texts.push(text);
        cost += Math.max(text.length, r.content.length);
        last = r.chainSeq;
      }
    }
    return { records, texts };
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/proof/{record_id}

  /** `sections` adds the proofs other wings hold (the global log's inclusion_proof) to a found record's bundle. */
  proof(recordId: string, sections: (record: StoredRecord) => Promise<Record<string, unknown>> = async () => ({})): Promise<Result<Proof>> {
    return this.sources.read((store) => this.proofOn(store, recordId, sections));
  }

  private async proofOn(replicaOrPrimary: LedgerStore, recordId: string, sections: (record: StoredRecord) => Promise<Record<string, unknown>>): Promise<Result<Proof>> {
    const found = isRecordId(recordId) ? await this.sources.record(replicaOrPrimary, recordId) : null;
    if (!found) return fail(errors.notFound(`no record ${recordId}`, 'record_id'));
    const { value: record, store } = found;
    const [agent, head, key, extra] = await Promise.all([
      store.findAgentById(record.agentId),
      store.chainHead(record.agentId),
      record.signature ? store.findSigningKey(record.agentId, record.signature.key_id) : Promise.resolve(null),
      sections(record),
    ]);
    const document: ProofDocument = {
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
        self: this.urls.proofUrl(record.id),
        chain_from_here: this.urls.chainUrl(record.agentHandle, { afterSeq: record.chainSeq - 1 }),
        export: this.urls.exportUrl(record.agentHandle),
      },
      ...extra,
    };
    return ok({ document, record, recordText: this.fullRecordJson(record) });
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/ledger

  ledgerPage(query: LedgerPageQuery): Promise<Result<LedgerPage>> {
    return this.sources.read((store) => this.ledgerPageOn(store, query));
  }

  private async ledgerPageOn(replicaOrPrimary: LedgerStore, query: LedgerPageQuery): Promise<Result<LedgerPage>> {
    let agentId: string | undefined;
    let store = replicaOrPrimary;
    if (query.agent !== undefined) {
      const found = await this.agent(store, query.agent, 'agent');
      if (!found.ok) return found;
      if (found.value.agent.demo && !query.includeDemo) {
        return fail(errors.invalidRequest(`agent ${query.agent} is a demo agent and demo records are hidden by default; pass include_demo=true to see them`, 'include_demo'));
      }
      agentId = found.value.agent.id;
      store = found.value.store;
    }
    const filter = { symbol: query.symbol, agentId, type: query.type, includeDemo: query.includeDemo };
    const { items, texts, hasMore, lastId } = await this.ledgerTexts(store, query.limit, query.cursor, filter);
    const nextCursor = hasMore ? lastId : null;
    return ok({ items, hasMore, nextCursor, next: nextCursor ? this.ledgerUrl(query, nextCursor) : null, texts });
  }

  /**
   * Up to `limit` ledger items before `cursor`, newest first, read a chunk at a time (one more
   * than shown: is there a next page?) and at most the content worth what is left of the budget.
   */
  private async ledgerTexts(store: LedgerStore, limit: number, cursor: string | undefined, filter: Omit<LedgerQuery, 'limit' | 'beforeSortKey' | 'maxBytes'>) {
    const items: LedgerItem[] = [];
    const texts: string[] = [];
    let chars = 0;
    let before = cursor === undefined ? undefined : sortKeyOf(cursor);
    let lastId: string | null = null;
    for (;;) {
      const want = Math.min(PAGE_READ_CHUNK, limit - items.length);
      const maxBytes = contentBudget(PAGE_CHAR_BUDGET - chars, true);
      const rows = await store.listLedger({ ...filter, limit: want + 1, beforeSortKey: before, maxBytes });
      for (const r of rows.slice(0, want)) {
        const proofUrl = this.urls.proofUrl(r.id);
        const text = `${this.fullRecordJson(r).slice(0, -1)},"proof_url":${JSON.stringify(proofUrl)}}`;
        items.push({ record: r, proofUrl });
        texts.push(text);
        chars += text.length;
        lastId = r.id;
        if (chars >= PAGE_CHAR_BUDGET && items.length < limit) return { items, texts, hasMore: true, lastId };
      }
      // Fewer rows than asked for, and not for the byte bound: the ledger ends here.
      if (rows.length <= want && contentBytes(rows) < maxBytes) return { items, texts, hasMore: false, lastId };
      if (items.length >= limit) return { items, texts, hasMore: rows.length > want || await this.olderExists(store, filter, lastId!), lastId };
      before = sortKeyOf(lastId!);
      await readPacer.turn();
    }
  }

  /** Whether the ledger holds a record older than `id` under `filter`. */
  private async olderExists(store: LedgerStore, filter: Omit<LedgerQuery, 'limit' | 'beforeSortKey' | 'maxBytes'>, id: string): Promise<boolean> {
    return (await store.listLedger({ ...filter, limit: 1, beforeSortKey: sortKeyOf(id), maxBytes: 1 })).length > 0;
  }

  private ledgerUrl(query: LedgerPageQuery, cursor: string): string {
    const params = new URLSearchParams({ limit: String(query.limit), cursor });
    if (query.symbol !== undefined) params.set('symbol', query.symbol);
    if (query.agent !== undefined) params.set('agent', query.agent);
    if (query.type !== undefined) params.set('type', query.type);
    if (query.includeDemo) params.set('include_demo', 'true');
    return this.urls.ledgerUrl(params);
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/export?agent=<handle>

  /**
   * The export of one agent: its header, then its records in chain order up to the head read at
   * the start. Records are read a page at a time (EXPORT_PAGE, EXPORT_PAGE_BYTES), and the next
   * page only when the stream asks for more: a slow client holds at most a page, however long the
   * chain or large its records.
   */
  export(handle: string, annotations?: ExportAnnotations): Promise<Result<Export>> {
    return this.sources.read((store) => this.exportOn(store, handle, annotations));
  }

  private async exportOn(
    replicaOrPrimary: LedgerStore,
    handle: string,
    annotations?: ExportAnnotations,
  ): Promise<Result<Export>> {
    const found = await this.agent(replicaOrPrimary, handle, 'agent');
    if (!found.ok) return found;
    const { agent, store } = found.value;
    const head = await store.chainHead(agent.id);
    const keys = await store.listSigningKeys(agent.id);
    const extra = annotations ? await annotations.header(agent.id, head.seq) : {};
    const header = {
      object: 'export',
      format: EXPORT_FORMAT,
      canonicalisation: CANON,
      algorithm: 'sha256',
      agent: agentSummary(agent),
      keys: keys.map(publicKeyView),
      head: headView(head),
      records: head.seq,
      chain_url: this.urls.chainUrl(agent.handle),
      ...extra,
    };
    async function* pages(): AsyncGenerator<ExportPage> {
      for await (const records of chainPages(store, agent.id, 0, head.seq, EXPORT_PAGE, EXPORT_PAGE_BYTES)) {
        yield { records, members: annotations ? await annotations.page(records) : () => null };
      }
    }
    return ok({ header, pages: pages() });
  }

  // -------------------------------------------------------------------------------------------
  // GET /v1/transparency

  transparency(now: Date) {
    return this.sources.read((store) => this.transparencyOn(store, now));
  }

  private async transparencyOn(store: LedgerStore, now: Date) {
    const [heads, counts] = await Promise.all([store.listHeads(), store.countRecords()]);
    return transparencyView(now, heads.map(({ agent, head }) => ({
      agent: agent.handle,
      demo: agent.demo,
      status: agent.status,
      ...headView(head),
    })), counts, this.baseUrl);
  }
}

function contentBytes(records: readonly StoredRecord[]): number {
  return records.reduce((sum, r) => sum + Buffer.byteLength(r.content), 0);
}

/** The agent's records with afterSeq < seq <= toSeq, in chain order, `pageSize` per page and about `maxBytes` of content at most. */
export async function* chainPages(store: LedgerStore, agentId: string, afterSeq: number, toSeq: number, pageSize: number, maxBytes?: number): AsyncGenerator<StoredRecord[]> {
  let after = afterSeq;
  while (after < toSeq) {
    const page = await store.listChain(agentId, after, Math.min(pageSize, toSeq - after), maxBytes);
    if (page.length === 0) return;
    yield page;
    after = page[page.length - 1]!.chainSeq;
  }
}
