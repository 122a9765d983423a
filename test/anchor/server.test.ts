// The anchoring job runs in `ledger serve` (src/server.ts): with calendars that cannot be reached,
// records are still written and integrated, /transparency says since when the calendars are
// unreachable, and the service shuts down promptly.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { loadConfig } from '../../src/config.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { startServer } from '../../src/server.ts';
import { validDecision } from '../api/record-helpers.ts';
import { postDecision } from '../support/app.ts';
import { startCalendarSim } from '../sim/ots-calendar.ts';
import { SimChain } from '../sim/bitcoin-chain.ts';

test('ledger serve anchors in the background; unreachable calendars affect nothing else', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ledger-anchor-serve-'));
  const gone = await startCalendarSim(new SimChain());
  const closed = gone.url;
  await gone.close();
  const server = await startServer(loadConfig({
    PORT: '0', LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ledger.db')}`, LEDGER_LOG_LEVEL: 'silent',
    LEDGER_OTS_CALENDARS: `${closed},${closed}/b`, LEDGER_BITCOIN_HEADERS_URL: closed,
  }));
  try {
    const created = await new Operators(server.store, systemClock).createAgent({ handle: `anchor-serve-${process.pid}`, demo: false });
    assert.ok(created.ok);
    const res = await postDecision(server.ledger, created.value.apiKey.secret, validDecision());
    assert.equal(res.statusCode, 201, res.body);
    let anchoring: { calendars_unreachable_since: string | null; note: string } | undefined;
    let treeSize = 0;
    for (let i = 0; i < 100 && !anchoring?.calendars_unreachable_since; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const doc = (await server.ledger.app.inject({ method: 'GET', url: '/v1/transparency' })).json();
      anchoring = doc.anchoring;
      treeSize = doc.log.tree_size;
    }
    assert.equal(treeSize, 1, 'the record was integrated');
    assert.ok(anchoring?.calendars_unreachable_since, JSON.stringify(anchoring));
    assert.match(anchoring!.note, /unreachable since/);
  } finally {
    const started = Date.now();
    await server.stop();
    assert.ok(Date.now() - started < 5_000, 'shutdown is not held up by anchoring');
    rmSync(dir, { recursive: true, force: true });
  }
});
