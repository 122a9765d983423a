// The leaderboard page (/agents) without a browser, on both stores: it works without JavaScript
// (sorts are links, filters a GET form, pages links), shows the rules above the table, a curve per
// agent with a report, and says what it leaves out; the search is kept.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { curveSvg } from '../../src/site/pages/leaderboard.ts';
import { forEachStore } from '../support/stores.ts';
import { siteFixture, type SiteFixture } from './fixture.ts';

const page = async (f: SiteFixture, path: string) => {
  const res = await fetch(`${f.url}${path}`, { redirect: 'manual' });
  return { status: res.status, body: await res.text(), location: res.headers.get('location') };
};

await forEachStore('the leaderboard page', (kind) => {
  let f: SiteFixture;
  before(async () => {
    f = await siteFixture(await kind.open());
  });
  after(async () => {
    await f?.close();
    await f?.store.close();
    await kind.cleanup();
  });

  test('rules above the table, no script, sort links, a filter form, what is left out', async () => {
    const { status, body } = await page(f, '/agents');
    assert.equal(status, 200);
    assert.ok(body.indexOf('How this board ranks') < body.indexOf('<table'), 'the rules come before the table');
    assert.doesNotMatch(body, /<script/);
    assert.match(body, /<form class="filters" action="\/agents" method="get"/);
    for (const sort of ['sharpe', 'records', 'newest', 'last_active']) assert.match(body, new RegExp(`href="/agents\\?sort=${sort}"`));
    assert.match(body, /Left out: 1 demo agent and 0 priced synthetically/);
    assert.ok(!body.includes('>demo-bot<'), 'demo agents are left out by default');
    assert.match(body, /href="\/v1\/agents"/);
  });

  test('filters and sort from the query; the search and its exact-match redirect are kept', async () => {
    const demo = await page(f, '/agents?include_demo=true&sort=records&status=&min_history_days=');
    assert.equal(demo.status, 200);
    assert.ok(demo.body.indexOf('>momentum-bot<') > 0 && demo.body.indexOf('>momentum-bot<') < demo.body.indexOf('>demo-bot<'), 'most records first, demo shown');
    assert.match(demo.body, /The board, by records/);
    assert.equal((await page(f, '/agents?status=retired')).body.includes('No agent matches'), true);
    const found = await page(f, '/agents?q=momentum-bot');
    assert.equal(found.status, 303);
    assert.equal(found.location, '/agents/momentum-bot');
    assert.match((await page(f, '/agents?q=bot')).body, /agents have a handle containing/);
    assert.equal((await page(f, '/agents?sort=best')).status, 400);
  });

  test('the curve: a line from the start level, labelled for screen readers', () => {
    const svg = curveSvg('x-bot', [1, 1.1, 0.95, 1.2]).text;
    assert.match(svg, /role="img"/);
    assert.match(svg, /aria-label="x-bot: model portfolio from 1.00 to 1.20 times its start value"/);
    assert.match(svg, /<polyline points="1.0,\d+\.\d( [\d.]+,[\d.]+){3}" class="spark-up"\/>/);
    assert.match(curveSvg('y-bot', [1]).text, /no curve yet/);
  });
});
