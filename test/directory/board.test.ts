// GET /v1/agents (the directory) on both stores: the board projected from the stored reports by the
// directory job, its filters and sorts, ranks and the unranked, retired agents kept, demo and
// synthetic agents left out unless asked (and counted), CSV equal to JSON, cursors refused when
// foreign or expired, and paging that neither skips nor repeats an agent while records are written,
// agents created and the board projected again between pages.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { readFileSync } from 'node:fs';
import { CURSOR_TTL_MS, MIN_RANK_DAYS } from '../../src/directory/rules.ts';
import { LIST_LIMIT } from '../../src/directory/service.ts';
import { LEVEL_SHARE_PERCENT } from '../../src/directory/port.ts';
import { MIN_RETURNS_RISK } from '../../src/method/perf/metrics.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { newKeypair, sign } from '../signing/helpers.ts';

type Row = Record<string, unknown> & { handle: string; rank: number | null; status: string };
type Page = { data: Row[]; has_more: boolean; next_cursor: string | null; next: string | null; counts: { agents: number; listed: number; unranked: number; excluded: { demo: number; synthetic: number } }; as_of: string | null; board_version: number };

const DAY = 86_400_000;
const today = () => new Date().toISOString().slice(0, 10);
const daysFromNow = (n: number) => new Date(Date.now() + n * DAY).toISOString().slice(0, 10);

/** A stored model report as performance/service.ts stores one, holding only what the directory reads. */
function reportText(o: { excess: string | null; cumulative?: string; sharpe?: string | null; synthetic?: boolean; asOf: string; points?: number }) {
  const metric = (v: string | null) => (v === null ? { value: null, reason: 'not enough history' } : { value: v });
  return JSON.stringify({
    published: {
      metrics: { cumulative_return: metric(o.cumulative ?? '0.05'), excess_return: metric(o.excess), sharpe: metric(o.sharpe ?? null), max_drawdown: { value: '-0.04', peak_date: null, trough_date: null, recovery_date: null } },
      benchmark: { symbol: 'SPY', metrics: { cumulative_return: metric('0.02') } },
      synthetic: o.synthetic ?? false,
      as_of: o.asOf,
      start_value: '100000.00',
      inception: today(),
      series: o.points === undefined ? [{ date: today(), value: '100000.00' }, { date: o.asOf, value: '105000.00' }]
        : Array.from({ length: o.points }, (_, i) => ({ date: o.asOf, value: (100_000 + i * 1234.5678).toFixed(2) })),
    },
  });
}

async function get(t: TestApp, url: string): Promise<{ status: number; body: Page & { error?: { param?: string; code: string; message: string } }; text: string; headers: Record<string, unknown> }> {
  const res = await t.app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.headers['content-type']?.toString().startsWith('application/json') ? res.json() : ({} as never), text: res.body, headers: res.headers };
}

const handles = (p: Page) => p.data.map((r) => r.handle);

/** RFC 4180 rows (quoted fields, doubled quotes), as a reader would parse them. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') { cell += '"'; i++; } else if (c === '"') quoted = false; else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ',') { row.push(cell); cell = ''; } else if (c === '\r' && text[i + 1] === '\n') { row.push(cell); rows.push(row); row = []; cell = ''; i++; } else cell += c;
  }
  return rows;
}

await forEachStore('the directory (GET /v1/agents)', (kind) => {
  let t: TestApp;
  const made: Record<string, { secret: string; agentId: string }> = {};

  async function agent(handle: string, o: { demo?: boolean; decisions?: number; displayName?: string } = {}) {
    await new Promise((resolve) => setTimeout(resolve, 2)); // each agent created a millisecond apart: sort=newest has no tie to break
    const created = await t.operators.createAgent({ handle, demo: o.demo ?? false, displayName: o.displayName ?? null });
    assert.ok(created.ok);
    made[handle] = { secret: created.value.apiKey.secret, agentId: created.value.agent.id };
    for (let i = 0; i < (o.decisions ?? 1); i++) {
      const res = await postDecision(t, created.value.apiKey.secret, { symbol: 'AAPL', action: 'BUY', quantity: '1', thesis: `${handle} ${i}` });
      assert.equal(res.statusCode, 201, res.body);
    }
  }

  async function report(handle: string, o: Parameters<typeof reportText>[0]) {
    await t.store.performance.saveReport({ agentId: made[handle]!.agentId, portfolio: 'model', throughSeq: 1, asOf: o.asOf, computedAt: new Date().toISOString(), report: reportText(o) });
  }

  before(async () => {
    t = await testApp(await kind.open(), { env: { LEDGER_READ_LIMIT_PER_MIN: '1000000' } });
    // Decisions: an order for the records sort, each agent registered after the one before.
    await agent('alpha-bot', { decisions: 3, displayName: '=HYPERLINK("x"), alpha' });
    await agent('bravo-bot', { decisions: 5 });
    await agent('charlie-bot', { decisions: 2 });
    await agent('delta-bot', { decisions: 4 });
    await agent('echo-demo', { demo: true });
    await agent('foxtrot-bot', { decisions: 1 });
    await agent('golf-bot', { decisions: 0 });
    await agent('hotel-bot', { decisions: 1 });
    await report('alpha-bot', { excess: '0.10', sharpe: '1.2', asOf: daysFromNow(120) });
    await report('bravo-bot', { excess: '0.30', asOf: daysFromNow(120) });
    await report('charlie-bot', { excess: '0.50', asOf: daysFromNow(30) }); // below the minimum history
    await report('delta-bot', { excess: '0.20', asOf: daysFromNow(200) });
    await report('echo-demo', { excess: '0.90', asOf: daysFromNow(200) });
    await report('foxtrot-bot', { excess: '0.80', synthetic: true, asOf: daysFromNow(200) });
    await report('hotel-bot', { excess: '0.10', asOf: daysFromNow(100) }); // ties alpha-bot
    // alpha-bot signs one more decision: 1 of 4 signed (not the signed level); hotel-bot signs its only other one.
    for (const handle of ['hotel-bot']) {
      const pair = newKeypair();
      const secret = made[handle]!.secret;
      const key = await t.app.inject({ method: 'POST', url: '/v1/keys', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, payload: JSON.stringify({ public_key: pair.publicKey, label: 'k' }) });
      const fields = { symbol: 'MSFT', action: 'SELL', quantity: '1', thesis: 'signed', occurred_at: new Date().toISOString() };
      const nonce = `nonce-${handle}-${Date.now()}`;
      const asserted = await t.app.inject({ method: 'POST', url: '/v1/decisions/assertion', headers: { authorization: `Bearer ${secret}`, 'content-type': 'application/json' }, payload: JSON.stringify({ ...fields, nonce }) });
      const res = await postDecision(t, secret, { ...fields, signature: { key_id: key.json().id, nonce, signature: sign(asserted.json().payload, pair) } });
      assert.equal(res.statusCode, 201, res.body);
    }
    const retired = await t.operators.setStatus('delta-bot', 'retired');
    assert.ok(retired.ok);
    await t.directoryJob.catchUp();
  });
  after(() => closeTestApp(t, kind));

  test('ranked by excess return: the ranked best first, ties share a rank (oldest first), the unranked after with the reason', async () => {
    const { status, body } = await get(t, '/v1/agents');
    assert.equal(status, 200);
    assert.deepEqual(handles(body), ['bravo-bot', 'delta-bot', 'alpha-bot', 'hotel-bot', 'charlie-bot', 'golf-bot']);
    assert.deepEqual(body.data.map((r) => r.rank), [1, 2, 3, 3, null, null]);
    assert.match(String(body.data[4]!.unranked_reason), /below the minimum history \(90 days; has 30\)/);
    assert.equal(body.counts.agents, 8);
    assert.equal(body.counts.listed, 6);
    assert.equal(body.counts.unranked, 2);
    assert.deepEqual(body.counts.excluded, { demo: 1, synthetic: 1 });
    assert.ok(body.as_of !== null, 'the answer says as of when');
    const bravo = body.data[0]!;
    assert.equal(bravo.excess_return, '0.30');
    assert.equal(bravo.records, 5);
    assert.equal(bravo.history_days, 120);
    assert.equal(bravo.signed_share, '0.0000');
    assert.equal(bravo.linked_share, null);
    assert.equal(bravo.verification, 'self_reported');
    assert.deepEqual(bravo.curve, [1, 1.05]);
  });

  test('retired agents are kept and marked; status filters', async () => {
    const all = await get(t, '/v1/agents');
    assert.equal(all.body.data.find((r) => r.handle === 'delta-bot')?.status, 'retired');
    const retired = await get(t, '/v1/agents?status=retired');
    assert.deepEqual(handles(retired.body), ['delta-bot']);
    const active = await get(t, '/v1/agents?status=active');
    assert.ok(!handles(active.body).includes('delta-bot'));
  });

  test('demo and synthetic agents are left out unless asked, and never ranked', async () => {
    const shown = await get(t, '/v1/agents?include_demo=true');
    assert.deepEqual(handles(shown.body).slice(0, 4), ['bravo-bot', 'delta-bot', 'alpha-bot', 'hotel-bot']);
    const echo = shown.body.data.find((r) => r.handle === 'echo-demo')!;
    const foxtrot = shown.body.data.find((r) => r.handle === 'foxtrot-bot')!;
    assert.equal(echo.rank, null);
    assert.equal(echo.unranked_reason, 'demo agents are never ranked');
    assert.equal(foxtrot.synthetic, true);
    assert.equal(foxtrot.unranked_reason, 'figures from synthetic prices are never ranked');
    assert.deepEqual(shown.body.counts.excluded, { demo: 0, synthetic: 0 });
    assert.equal(shown.body.counts.listed, 8);
  });

  test('filters: min_history_days, signed, verified', async () => {
    assert.deepEqual(handles((await get(t, '/v1/agents?min_history_days=100')).body).sort(), ['alpha-bot', 'bravo-bot', 'delta-bot', 'hotel-bot']);
    assert.deepEqual(handles((await get(t, '/v1/agents?min_history_days=150')).body), ['delta-bot']);
    assert.deepEqual(handles((await get(t, '/v1/agents?signed=true')).body), []);
    const hotel = (await get(t, '/v1/agents')).body.data.find((r) => r.handle === 'hotel-bot')!;
    assert.equal(hotel.signed_share, '0.5000');
    assert.deepEqual(handles((await get(t, '/v1/agents?verified=true')).body), []);
    assert.equal((await get(t, '/v1/agents?verified=false')).body.data.length, 6);
    const bad = await get(t, '/v1/agents?min_history_days=-1');
    assert.equal(bad.status, 400);
    assert.equal(bad.body.error?.param, 'min_history_days');
  });

  test('sorts: records, newest, last_active, sharpe', async () => {
    assert.deepEqual(handles((await get(t, '/v1/agents?sort=records')).body), ['bravo-bot', 'delta-bot', 'alpha-bot', 'charlie-bot', 'hotel-bot', 'golf-bot']);
    assert.deepEqual(handles((await get(t, '/v1/agents?sort=newest')).body), ['hotel-bot', 'golf-bot', 'delta-bot', 'charlie-bot', 'bravo-bot', 'alpha-bot']);
    // hotel-bot recorded last (its signed decision); golf-bot never recorded: last.
    const active = handles((await get(t, '/v1/agents?sort=last_active')).body);
    assert.equal(active[0], 'hotel-bot');
    assert.equal(active.at(-1), 'golf-bot');
    const sharpe = (await get(t, '/v1/agents?sort=sharpe')).body;
    assert.equal(sharpe.data[0]!.handle, 'alpha-bot');
    assert.equal(sharpe.data[0]!.rank, 1);
    assert.ok(sharpe.data.slice(1).every((r) => r.rank === null));
    assert.equal(sharpe.counts.unranked, 5);
    const records = (await get(t, '/v1/agents?sort=records')).body;
    assert.ok(records.data.every((r) => r.rank === null), 'an ordering sort ranks no one');
  });

  test('CSV equals JSON, row for row, with formula cells neutralised', async () => {
    const json = (await get(t, '/v1/agents?include_demo=true&limit=5')).body;
    const csv = await get(t, '/v1/agents?include_demo=true&limit=5&format=csv');
    assert.equal(csv.status, 200);
    assert.match(String(csv.headers['content-type']), /^text\/csv/);
    assert.match(String(csv.headers.link), /format=csv>; rel="next"/);
    const [header, ...rows] = parseCsv(csv.text);
    assert.equal(rows.length, json.data.length);
    const expected = (v: unknown) => {
      if (v === null) return '';
      const s = String(v);
      return /^[\s"']*[=+\-@]/.test(s) && typeof v === 'string' && !/^-?\d/.test(s) ? `'${s}` : s;
    };
    rows.forEach((cells, i) => {
      const item = json.data[i]!;
      header!.forEach((column, j) => assert.equal(cells[j], expected(item[column]), `${item.handle}.${column}`));
      assert.deepEqual(Object.keys(item).filter((k) => k !== 'curve').sort(), [...header!].sort());
    });
    assert.ok(csv.text.includes(`"'=HYPERLINK(""x""), alpha"`), 'the display name that would run as a formula is neutralised');
  });

  test('cursors: a foreign or malformed cursor and one of another sort are 400 cursor', async () => {
    for (const url of ['/v1/agents?cursor=nope', '/v1/agents?cursor=WzEsMiwzXQ']) {
      const res = await get(t, url);
      assert.equal(res.status, 400, url);
      assert.equal(res.body.error?.param, 'cursor');
    }
    const first = (await get(t, '/v1/agents?limit=2')).body;
    const other = await get(t, `/v1/agents?limit=2&sort=records&cursor=${first.next_cursor}`);
    assert.equal(other.status, 400);
    assert.equal(other.body.error?.param, 'cursor');
  });

  test('a cursor naming a board version that never had a page to continue (0, before the first projection) is 400 cursor', async () => {
    const first = (await get(t, '/v1/agents?limit=2')).body;
    const fields = JSON.parse(Buffer.from(first.next_cursor!, 'base64url').toString('utf8')) as unknown[];
    const never = Buffer.from(JSON.stringify([0, ...fields.slice(1)])).toString('base64url');
    const res = await get(t, `/v1/agents?limit=2&cursor=${never}`);
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.error?.param, 'cursor');
  });

  test('paging neither skips nor repeats an agent while records are written, agents created and the board projected again', async () => {
    for (let i = 0; i < 12; i++) await agent(`papa-${String(i).padStart(2, '0')}`, { decisions: 1 + (i % 4) });
    await t.directoryJob.catchUp();
    for (const sort of ['records', 'last_active', 'excess_return', 'newest']) {
      const before = (await get(t, `/v1/agents?sort=${sort}&limit=200`)).body;
      const expected = handles(before).sort();
      const seen: string[] = [];
      let url: string | null = `/v1/agents?sort=${sort}&limit=3`;
      let n = 0;
      while (url !== null) {
        const page: Page = (await get(t, url)).body;
        seen.push(...handles(page));
        // Between pages: the agents seen record more (they move on records and last_active), a new agent arrives, the board is projected again.
        for (const h of handles(page)) await postDecision(t, made[h]!.secret, { symbol: 'MSFT', action: 'BUY', quantity: '1', thesis: 'more' });
        await agent(`quebec-${sort.replace('_', '-')}-${n++}`, { decisions: 9 });
        await t.directoryJob.catchUp();
        url = page.next === null ? null : page.next.replace(/^https?:\/\/[^/]+/, '');
      }
      assert.deepEqual([...seen].sort(), expected, `${sort}: every agent of the first page's board exactly once`);
    }
  });

  test('an expired cursor is refused; a re-projection supersedes and pruning removes the old rows', async () => {
    const first = (await get(t, '/v1/agents?limit=2')).body;
    await postDecision(t, made['alpha-bot']!.secret, { symbol: 'MSFT', action: 'BUY', quantity: '1', thesis: 'again' });
    await t.directoryJob.catchUp();
    const board = t.store.directory;
    const pruned = await board.prune(new Date(Date.now() + 60_000).toISOString());
    assert.ok(pruned > first.board_version);
    const res = await get(t, `/v1/agents?limit=2&cursor=${first.next_cursor}`);
    assert.equal(res.status, 400);
    assert.match(res.body.error!.message, /cursor expired/);
    // The current board is whole after the prune.
    // (a filter not asked for before: counts are reused for 10 s per filter)
    assert.equal((await get(t, '/v1/agents?limit=200&signed=false&verified=false')).body.counts.agents, (await t.store.listAgents()).length);
  });

  test('bounded: the largest row (a 120-character display name of 4-byte characters, a full curve) is under 2 KB, so 200 fit in 512 KiB', async () => {
    await agent('romeo-bot', { displayName: '𝕏'.repeat(120) });
    await report('romeo-bot', { excess: '-0.123456', cumulative: '-0.987654', sharpe: '-1.2345', asOf: daysFromNow(400), points: 500 });
    await t.directoryJob.catchUp();
    const romeo = (await get(t, '/v1/agents?limit=200&sort=newest')).body.data.find((r) => r.handle === 'romeo-bot')!;
    assert.ok(romeo, 'listed');
    assert.equal((romeo.curve as number[]).length, 32);
    assert.ok(Buffer.byteLength(JSON.stringify(romeo)) < 2048, `${Buffer.byteLength(JSON.stringify(romeo))} bytes`);
  });

  test('the job projects nothing twice: a level board has no stale agent', async () => {
    assert.deepEqual(await t.store.directory.staleAgents('', 10_000), { stale: [], last: null });
  });
});

test('docs/leaderboard.md states the rules the service applies', () => {
  const doc = readFileSync(new URL('../../docs/leaderboard.md', import.meta.url), 'utf8');
  assert.ok(doc.includes(`**${MIN_RANK_DAYS} days**`), 'the minimum history');
  assert.ok(doc.includes(`**${MIN_RETURNS_RISK} daily returns**`), 'Sharpe\'s minimum');
  assert.ok(doc.includes(`**${CURSOR_TTL_MS / 60_000} minutes**`), 'the cursor\'s life');
  assert.ok(doc.includes(`from ${LEVEL_SHARE_PERCENT}% linked`) && doc.includes(`${LEVEL_SHARE_PERCENT}% signed`), 'the verification levels');
  assert.ok(doc.includes(`| 1 to ${LIST_LIMIT.max} | ${LIST_LIMIT.default} |`), 'the page size');
});
