// docs/public-reads.md as a contract: its Cache-Control table, read by read, and the fields it
// names for /v1/transparency's `counts` and `anchoring`, asked of the service on both stores.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { after, before, test } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { PricingJob } from '../../src/market/pricing.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { validDecision } from '../api/record-helpers.ts';
import { testIntegrator, testLogKey } from '../log/helpers.ts';

const doc = readFileSync(new URL('../../docs/public-reads.md', import.meta.url), 'utf8');

type CacheRow = { read: string; when: string; cacheControl: string };

/** The rows of the table headed `| read | when | Cache-Control |`. */
function cacheTable(): CacheRow[] {
  const lines = doc.split('\n');
  const start = lines.findIndex((l) => /^\| read \| when \| Cache-Control \|$/.test(l));
  assert.ok(start >= 0, 'docs/public-reads.md has the Cache-Control table');
  const rows: CacheRow[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [read, when, cacheControl] = line.split('|').slice(1, -1).map((c) => c.trim().replace(/^`|`$/g, ''));
    rows.push({ read: read!, when: when!, cacheControl: cacheControl! });
  }
  return rows;
}

/** The backticked names in the doc's parenthesis after `name` (e.g. `anchoring` (…)). */
function namedFields(name: string): string[] {
  const at = doc.indexOf(`\`${name}\` (`);
  assert.ok(at >= 0, `the doc describes ${name}`);
  let depth = 0;
  let end = at + name.length + 4; // past "`name` ("
  for (; end < doc.length; end++) {
    if (doc[end] === '(') depth++;
    if (doc[end] === ')' && depth-- === 0) break;
  }
  const inside = doc.slice(at + name.length + 4, end).replace(/\[[^\]]*\]\([^)]*\)/g, '');
  return [...inside.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
}

await forEachStore('docs/public-reads.md holds', (kind) => {
  let t: TestApp;
  let handle = '';
  let settled = '';
  let unpriced = '';
  let unsettled = '';
  before(async () => {
    t = await testApp(await kind.open());
    const agent = await t.agent();
    handle = agent.handle;
    const post = async () => {
      const res = await postDecision(t, agent.secret, validDecision({ symbol: 'AAPL' }));
      assert.equal(res.statusCode, 201, res.body);
      return res.json().id as string;
    };
    const { key } = await testLogKey();
    const integrate = async () => {
      const integrator = testIntegrator(t.store, key);
      await integrator.integratePending();
      await integrator.stop();
    };
    settled = await post();
    await integrate();
    const pricing = new PricingJob({ market: new SyntheticMarketData('docs-contract'), store: t.store.market });
    await pricing.round();
    unpriced = await post(); // this app has no provider (testApp's default), and the job above has run
    await integrate();
    unsettled = await post();
  });
  after(() => closeTestApp(t, kind));

  test('every row of the Cache-Control table is what the service sends', async () => {
    const rows = cacheTable();
    assert.deepEqual(rows.map((r) => r.read), [
      '/v1/agents/{handle}', '/v1/agents/{handle}/chain', '/v1/proof/{record_id}', '/v1/proof/{record_id}', '/v1/proof/{record_id}',
      '/v1/ledger', '/v1/agents', '/v1/export?agent={handle}', '/v1/transparency',
    ], 'the table names the reads this test asks (add a row here with one there)');
    for (const row of rows) {
      const id = row.when.startsWith('settled without market data') ? unpriced
        : row.when.startsWith('settled') ? settled : row.when.startsWith('not settled') ? unsettled : settled;
      if (row.read.includes('{record_id}')) assert.ok(row.when === 'always' || row.when.startsWith('settled') || row.when.startsWith('not settled'), row.when);
      const url = row.read.replace('{handle}', handle).replace('{record_id}', id);
      const res = await t.app.inject({ method: 'GET', url });
      assert.equal(res.statusCode, 200, `${url}: ${res.body.slice(0, 200)}`);
      assert.equal(res.headers['cache-control'], row.cacheControl, `${row.read} (${row.when})`);
    }
  });

  test('the fields the doc names for /v1/transparency counts and anchoring are the ones served', async () => {
    const body = (await t.app.inject({ method: 'GET', url: '/v1/transparency' })).json();
    assert.deepEqual(namedFields('counts').sort(), Object.keys(body.counts).sort());
    assert.deepEqual(namedFields('anchoring').sort(), Object.keys(body.anchoring).sort());
  });
});
