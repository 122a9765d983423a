// Per-agent chain order under concurrent writers: many concurrent posts on one app (group
// commit), many agents at once, and two OS processes writing to one agent on the same database.
// Afterwards every chain is gapless (seq 1..n), linked, and every hash recomputes with the core.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';
import { outputOf } from '../support/child-output.ts';

const WRITER = fileURLToPath(new URL('./fixtures/chain-writer.ts', import.meta.url));
const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type WriterResult = { label: string; ids: string[]; failures: string[] };

/** Starts a writer process; resolves `ready` once it has built its app, `done` with its report. */
function startWriter(url: string, secret: string, label: string, count: number, width: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', WRITER, url, secret, label, String(count), String(width)], { cwd: ROOT, stdio: ['pipe', 'pipe', 'pipe'] });
  const ended = outputOf(child);
  let seen = '';
  let markReady: () => void = () => undefined;
  const ready = new Promise<void>((resolve) => (markReady = resolve));
  child.stdout.on('data', (chunk: Buffer) => {
    seen += chunk.toString();
    if (seen.startsWith('ready\n')) markReady();
  });
  const done = ended.then(({ code, stdout, stderr }) => {
    if (code !== 0) throw new Error(`writer ${label} exited ${code}: ${stderr}`);
    const last = stdout.trim().split('\n').pop() ?? '';
    try {
      return JSON.parse(last) as WriterResult;
    } catch {
      throw new Error(`writer ${label} printed no report: ${stdout} ${stderr}`);
    }
  });
  return { ready, done, go: () => child.stdin.end('go\n'), kill: () => child.kill('SIGKILL') };
}

/** How often consecutive records of the chain change writer: > 1 shows the writers interleaved. */
function writerSwitches(contents: { metadata?: { writer?: string } }[]): number {
  let switches = 0;
  for (let i = 1; i < contents.length; i++) if (contents[i]!.metadata?.writer !== contents[i - 1]!.metadata?.writer) switches++;
  return switches;
}

await forEachStore('concurrent writers', (kind) => {
  let store: LedgerStore;
  let t: TestApp;

  before(async () => {
    store = await kind.open();
    t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
  });
  after(() => closeTestApp(t, kind));

  test('300 concurrent posts to one agent on one app: seq 1..300, every hash recomputes', async () => {
    const agent = await t.agent();
    const results = await Promise.all(Array.from({ length: 300 }, (_, i) => postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', quantity: i })));
    assert.deepEqual([...new Set(results.map((r) => r.statusCode))], [201]);
    const answered = results.map((r) => r.json().verification.chain_seq as number).sort((a, b) => a - b);
    assert.deepEqual(answered, Array.from({ length: 300 }, (_, i) => i + 1), 'each answer has its own position');
    const records = await assertChainVerifies(store, agent, 300);
    const byId = new Map(records.map((r) => [r.id, r]));
    for (const r of results) {
      const body = r.json();
      const stored = byId.get(body.id);
      assert.ok(stored, 'every acknowledged decision is in the chain');
      assert.equal(stored.chainHash, body.verification.chain_hash);
      assert.equal(stored.chainSeq, body.verification.chain_seq);
    }
    for (let i = 1; i < records.length; i++) {
      assert.equal(records[i]!.prevHash, records[i - 1]!.chainHash, 'prev links');
      assert.ok(records[i]!.id > records[i - 1]!.id, 'ids increase along the chain');
      assert.ok(records[i]!.recordedAt >= records[i - 1]!.recordedAt, 'recorded_at never goes back');
    }
  });

  test('20 agents writing at once keep 20 separate gapless chains', async () => {
    const agents = await Promise.all(Array.from({ length: 20 }, () => t.agent()));
    await Promise.all(agents.flatMap((a) => Array.from({ length: 15 }, (_, i) => postDecision(t, a.secret, { symbol: 'MSFT', action: 'SELL', quantity: i }))));
    for (const a of agents) {
      const records = await assertChainVerifies(store, a, 15);
      assert.ok(records.every((r) => JSON.parse(r.content).agent === a.handle));
    }
  });

  test('two app instances on one store writing to one agent', async () => {
    const second = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
    try {
      const agent = await t.agent();
      await Promise.all(Array.from({ length: 100 }, (_, i) => postDecision(i % 2 ? t : second, agent.secret, { symbol: 'AAPL', action: 'HOLD', quantity: i })));
      await assertChainVerifies(store, agent, 100);
    } finally {
      await second.close();
    }
  });

  test('two OS processes writing to one agent on one database: gapless, every hash recomputes', async () => {
    const url = await kind.freshUrl();
    const shared = openStore(url);
    await shared.migrate();
    const host = await testApp(shared);
    const writers: ReturnType<typeof startWriter>[] = [];
    try {
      const agent = await host.agent();
      const perWriter = 150;
      writers.push(startWriter(url, agent.secret, 'first', perWriter, 10), startWriter(url, agent.secret, 'second', perWriter, 10));
      await Promise.all(writers.map((w) => w.ready));
      for (const w of writers) w.go();
      const reports = await Promise.all(writers.map((w) => w.done));
      for (const r of reports) {
        assert.deepEqual(r.failures, [], `writer ${r.label} had only 201s`);
        assert.equal(r.ids.length, perWriter);
      }
      const records = await assertChainVerifies(shared, agent, 2 * perWriter);
      const stored = new Set(records.map((r) => r.id));
      for (const r of reports) for (const id of r.ids) assert.ok(stored.has(id), `acknowledged ${id} is in the chain`);
      const switches = writerSwitches(records.map((r) => JSON.parse(r.content)));
      assert.ok(switches > 1, `the two processes interleaved (${switches} switches)`);
    } finally {
      for (const w of writers) w.kill();
      await host.close();
      await shared.close();
    }
  });
});
