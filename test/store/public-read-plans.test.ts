// Every public read's queries, as the service runs them, planned without a scan of a table that grows
// with the ledger, on both stores (issue 43): each read is served once on the site's fixture ledger
// (test/site/fixture.ts: signed and unsigned decisions, fills, a demo agent, the log integrated, anchors,
// the directory projected), every SELECT it ran is explained by the store's own planner, and each step
// on a growing table must be a seek or a walk that a LIMIT ends (test/support/plans.ts). This
// generalises the ledger page's CROSS JOIN test (sqlite-page-plans.test.ts) to every read the issue
// names, whatever SQL a later change gives them. The tables of the agents are sought too, except by
// the reads that list every agent's head by design (the transparency report and the home page: they
// grow with the agents, not with the records). PLAN_TEST_WITHOUT_INDEXES=1 plans every statement
// without the indexes of those tables: every test here fails then (test/support/plans.ts).
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { LedgerStore } from '../../src/store/port.ts';
import { siteFixture, type SiteFixture } from '../site/fixture.ts';
import { AGENT_TABLES, GROWING_TABLES, scansOf, statementsOf, watchStatements } from '../support/plans.ts';
import { forEachStore } from '../support/stores.ts';

/** `everyAgent`: the read lists every agent by design, so only the tables growing with the records count. */
type PublicRead = { name: string; url: (f: SiteFixture) => string; everyAgent?: true };

/** The reads of issue 43's scope, each as a visitor asks for it. */
const READS: PublicRead[] = [
  { name: 'the ledger\'s first page', url: () => '/v1/ledger' },
  { name: 'the ledger\'s first page with demo agents', url: () => '/v1/ledger?include_demo=true' },
  { name: 'a deep ledger page', url: (f) => `/v1/ledger?limit=2&cursor=${f.ids.signed}` },
  { name: 'a deep ledger page with demo agents', url: (f) => `/v1/ledger?limit=2&include_demo=true&cursor=${f.ids.signed}` },
  { name: 'an agent\'s ledger page', url: (f) => `/v1/ledger?agent=${f.handle}` },
  { name: 'a chain page', url: (f) => `/v1/agents/${f.handle}/chain?limit=2000&after_seq=1` },
  { name: 'a proof', url: (f) => `/v1/proof/${f.ids.signed}` },
  { name: 'the profile', url: (f) => `/v1/agents/${f.handle}` },
  { name: 'the transparency report', url: () => '/v1/transparency', everyAgent: true },
  { name: 'the directory\'s first page', url: () => '/v1/agents' },
  { name: 'the home page', url: () => '/', everyAgent: true },
  { name: 'the agent page', url: (f) => `/agents/${f.handle}` },
  { name: 'the record page', url: (f) => `/records/${f.ids.linked}` },
];

await forEachStore('public reads planned without a scan of a growing table', (kind) => {
  let store: LedgerStore;
  let f: SiteFixture;
  before(async () => {
    store = await kind.open();
    watchStatements(store);
    f = await siteFixture(store);
  });
  after(async () => {
    await f?.close();
    await store?.close();
    await kind.cleanup();
  });

  for (const read of READS) {
    test(read.name, async () => {
      const url = read.url(f);
      let status = 0;
      const ran = await statementsOf(async () => (status = (await f.ledger.app.inject({ method: 'GET', url })).statusCode));
      assert.equal(status, 200, url);
      assert.ok(ran.length > 0, `${url} ran no SELECT on the store`);
      const growing = read.everyAgent ? GROWING_TABLES : new Set([...GROWING_TABLES, ...AGENT_TABLES]);
      for (const statement of ran) {
        const scans = await scansOf(store, statement, growing);
        assert.deepEqual(scans, [], `${url}: ${statement.sql.replace(/\s+/g, ' ')}`);
      }
    });
  }
});
