// Issue 16, finding 2: public reads are bounded in size as well as in records. Records whose
// metadata doubles when escaped make a page stop early with its cursor; following the cursors
// still reaches every record exactly once. Issue 24, finding 2: an export read by a client that
// stops reading has read about a MiB of records from the store, not a page of a thousand, and
// once read on, its bytes are those of the whole chain written at once. Issue 24, the hostile
// reader: a ledger or chain page of large records reads about the records it shows (not a chunk
// of a hundred), and its bytes are those it had when it read every record of the chunk.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Readable, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { setTimeout as sleep } from 'node:timers/promises';
import { sha256Hex } from '../../src/core/sha256.ts';
import { chainPageBody, exportBody, exportLine, ledgerPageBody } from '../../src/api/routes/public/bodies.ts';
import { EXPORT_PAGE_BYTES, PAGE_CHAR_BUDGET, PublicReads } from '../../src/ledger/public/reads.ts';
import { ObservationReads } from '../../src/market/observations.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import type { StoredRecord } from '../../src/domain/types.ts';
import { forEachStore } from '../support/stores.ts';
import { idempotencyKey, postDecision, testApp, type TestApp } from '../support/app.ts';
import { validDecision } from '../api/record-helpers.ts';

const RECORDS = 40;
/** About 120 KB of request body, twice that once escaped again in a page. */
const heavy = () => validDecision({ metadata: { quotes: '"'.repeat(60_000) } });
/** Equal texts of megabytes, with where they first differ (never a diff of both). */
function same(actual: string, expected: string): void {
  if (actual === expected) return;
  let i = 0;
  while (actual[i] === expected[i]) i++;
  assert.fail(`${actual.length} and ${expected.length} characters, first different at ${i}: ${JSON.stringify(actual.slice(i - 80, i + 80))} vs ${JSON.stringify(expected.slice(i - 80, i + 80))}`);
}

const MAX_PAGE = PAGE_CHAR_BUDGET + 512 * 1024; // the budget plus at most one record's text

/** A page's body as GET /v1/ledger or /v1/agents/{handle}/chain sends it. */
async function ledgerBody(read: ReturnType<PublicReads['ledgerPage']>): Promise<string> {
  const page = await read;
  assert.ok(page.ok);
  return ledgerPageBody(page.value).body;
}
async function chainBody(read: ReturnType<PublicReads['chainPage']>): Promise<string> {
  const page = await read;
  assert.ok(page.ok);
  return chainPageBody(page.value).body;
}

await forEachStore('public reads bounded in size', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let handle: string;
  const ids: string[] = [];

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '100000' } });
    const agent = await t.agent();
    handle = agent.handle;
    for (let i = 0; i < RECORDS; i++) {
      const res = await postDecision(t, agent.secret, heavy(), idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      ids.push(res.json().id);
    }
  });
  after(async () => {
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  test('chain pages stop at the budget and their next links reach every record once', async () => {
    const seen: string[] = [];
    let url: string | null = `/v1/agents/${handle}/chain?limit=2000`;
    let pages = 0;
    while (url) {
      const res: { statusCode: number; body: string; json: () => unknown } = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.length < MAX_PAGE, `a page of ${res.body.length} characters`);
      const page = res.json() as { records: { entry: { id: string } }[]; has_more: boolean; next_after_seq: number | null };
      seen.push(...page.records.map((r) => r.entry.id));
      url = page.has_more ? `/v1/agents/${handle}/chain?limit=2000&after_seq=${page.next_after_seq}` : null;
      pages++;
    }
    assert.ok(pages > 1, 'the budget split the chain');
    assert.deepEqual(seen, ids);
  });

  test('ledger pages stop at the budget and their cursors reach every record once', async () => {
    const seen: string[] = [];
    let url: string | null = '/v1/ledger?limit=200';
    let pages = 0;
    while (url) {
      const res: { statusCode: number; body: string; json: () => unknown } = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200);
      assert.ok(res.body.length < MAX_PAGE, `a page of ${res.body.length} characters`);
      const page = res.json() as { data: { entry: { id: string } }[]; has_more: boolean; next_cursor: string | null };
      seen.push(...page.data.map((r) => r.entry.id));
      url = page.has_more ? `/v1/ledger?limit=200&cursor=${page.next_cursor}` : null;
      pages++;
    }
    assert.ok(pages > 1, 'the budget split the ledger');
    assert.deepEqual(seen, [...ids].reverse());
  });

  test('an export to a client that stops reading reads about EXPORT_PAGE_BYTES of records ahead of it; read on, its bytes are the whole chain\'s', async () => {
    const agent = (await store.findAgentByHandle(handle))!;
    let contentRead = 0;
    const counted = new Proxy(store, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (key !== 'listChain') return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return async (...args: Parameters<LedgerStore['listChain']>) => {
          const page = await target.listChain(...args);
          for (const r of page) contentRead += r.content.length;
          return page;
        };
      },
    });
    const annotations = new ObservationReads(store.market, new SyntheticMarketData('bounded-reads')).exportAnnotations();
    const read = await new PublicReads(counted, 'http://ledger.test').export(handle, annotations);
    assert.ok(read.ok);
    const exported = exportBody(read.value);
    // The client takes the first chunk and then stops reading, behind the stream as the route sends it.
    const chunks: Buffer[] = [];
    let resume!: () => void;
    const resumed = new Promise<void>((resolve) => (resume = resolve));
    const client = new Writable({
      write(chunk: Buffer, _encoding, done) {
        chunks.push(chunk);
        if (chunks.length === 1) void resumed.then(() => done());
        else done();
      },
    });
    const streamed = pipeline(Readable.from(exported.lines, { objectMode: false }), client);
    for (let quiet = 0, last = -1; quiet < 5; quiet = contentRead === last ? quiet + 1 : 0, last = contentRead) await sleep(50);
    const record = 130_000;
    const chain = RECORDS * record;
    assert.ok(contentRead > 0 && contentRead <= EXPORT_PAGE_BYTES + 2 * record, `${contentRead} characters of content read for a client that stopped (the chain holds about ${chain})`);
    resume();
    await streamed;
    // The reference: the header, then every record's line written from one read of the whole chain.
    const records: StoredRecord[] = await store.listChain(agent.id, 0, RECORDS);
    const more = await annotations.page(records);
    const lines = records.map((r) => exportLine(r, more(r)) + '\n').join('');
    const exportOf = (text: string, etag: unknown) => {
      const header = text.split('\n', 1)[0]!;
      assert.equal(JSON.parse(header).records, RECORDS);
      same(text, header + '\n' + lines);
      assert.equal(etag, `W/"${sha256Hex(header).slice(0, 32)}"`);
    };
    exportOf(Buffer.concat(chunks).toString('utf8'), exported.etag);
    const res = await t.app.inject({ method: 'GET', url: `/v1/export?agent=${handle}` });
    exportOf(res.body, res.headers.etag);
  });

  /** The store, with the records each listLedger and listChain call returned counted; `unbounded`: their byte bound dropped (every record of the chunk read). */
  function countingStore(unbounded = false) {
    const read = { records: 0 };
    const counted = new Proxy(store, {
      get: (target, key) => {
        const value = Reflect.get(target, key, target);
        if (key === 'listLedger') {
          return async (q: Parameters<LedgerStore['listLedger']>[0]) => {
            const rows = await target.listLedger(unbounded ? { ...q, maxBytes: undefined } : q);
            read.records += rows.length;
            return rows;
          };
        }
        if (key === 'listChain') {
          return async (agentId: string, afterSeq: number, limit: number, maxBytes?: number) => {
            const rows = await target.listChain(agentId, afterSeq, limit, unbounded ? undefined : maxBytes);
            read.records += rows.length;
            return rows;
          };
        }
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    return { reads: new PublicReads(counted, 'http://ledger.test'), read };
  }

  test('a ledger or chain page of large records reads about the records it shows, and its bytes are those of reading every record of the chunk', async () => {
    const plain = await t.agent();
    for (let i = 0; i < RECORDS; i++) {
      const res = await postDecision(t, plain.secret, validDecision({ metadata: { blob: 'x'.repeat(110_000) } }), idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
    }
    const pages = [
      { name: 'ledger', read: (r: PublicReads) => ledgerBody(r.ledgerPage({ limit: 100, includeDemo: false })), items: (b: string) => (JSON.parse(b) as { data: unknown[] }).data.length },
      { name: 'ledger of one agent', read: (r: PublicReads) => ledgerBody(r.ledgerPage({ limit: 100, agent: plain.handle, includeDemo: false })), items: (b: string) => (JSON.parse(b) as { data: unknown[] }).data.length },
      { name: 'chain', read: (r: PublicReads) => chainBody(r.chainPage({ handle: plain.handle, afterSeq: 0, limit: 100, payloads: true })), items: (b: string) => (JSON.parse(b) as { records: unknown[] }).records.length },
      { name: 'chain without payloads', read: (r: PublicReads) => chainBody(r.chainPage({ handle: plain.handle, afterSeq: 0, limit: 100, payloads: false })), items: (b: string) => (JSON.parse(b) as { records: unknown[] }).records.length },
    ];
    for (const page of pages) {
      const bounded = countingStore();
      const whole = countingStore(true);
      const [got, reference] = [await page.read(bounded.reads), await page.read(whole.reads)];
      same(got, reference);
      const shown = page.items(got);
      assert.ok(shown < RECORDS, `${page.name}: the budget ended the page (${shown} records)`);
      assert.ok(bounded.read.records <= shown + 2, `${page.name}: ${bounded.read.records} records read for ${shown} shown`);
    }
    // Every limit and cursor of the heavy agent's and the plain one's ledger: the same pages as from whole chunks.
    for (const limit of [1, 7, 20, 100]) {
      for (const agent of [undefined, handle, plain.handle]) {
        let cursor: string | undefined;
        do {
          const q = { limit, cursor, agent, includeDemo: false };
          const [got, reference] = [await ledgerBody(countingStore().reads.ledgerPage(q)), await ledgerBody(countingStore(true).reads.ledgerPage(q))];
          same(got, reference);
          cursor = (JSON.parse(got) as { next_cursor: string | null }).next_cursor ?? undefined;
        } while (cursor !== undefined);
      }
    }
  });

  test('a page of large records is read in slices with turns for I/O between them: what arrives meanwhile (a write) does not wait for the whole page', async () => {
    for (const read of [
      (r: PublicReads) => r.chainPage({ handle, afterSeq: 0, limit: 100, payloads: true }),
      (r: PublicReads) => r.ledgerPage({ limit: 100, agent: handle, includeDemo: false }),
    ]) {
      let done = false;
      let turnsDuringPage = 0;
      const page = read(new PublicReads(store, 'http://ledger.test')).then((p) => ((done = true), p));
      const poll = () => setImmediate(() => {
        if (done) return;
        turnsDuringPage++;
        poll();
      });
      poll();
      assert.ok((await page).ok);
      assert.ok(turnsDuringPage >= 1, `${turnsDuringPage} turns of the event loop while the page was read (none: it was read in one slice)`);
    }
  });
});
