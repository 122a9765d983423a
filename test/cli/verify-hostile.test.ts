// The verifiers against a server that does not play fair (the third security probe): it stalls,
// trickles, sends an endless body, a huge or deeply nested document, the wrong content type, or
// redirects to another origin. `ledger verify` (an export, a chain, a proof and the log),
// `ledger verify --performance` and the Python verifier (with --performance too) each end within their bound with exit 2
// and one line, their peak memory measured (GNU time's maximum resident set size) while the
// server would send without end. Each run is a real process against a real local server.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { HOSTILE_BEHAVIOURS, spawnHostileServer, type HostileServer } from '../support/hostile-server.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));
const PYTHON_DIR = fileURLToPath(new URL('../../python/', import.meta.url));
const PYTHON = process.env.LEDGER_TEST_PYTHON ?? '/usr/bin/python3';
const TIME = '/usr/bin/time';

/** The bounds each run is given: small, so the suite is quick; the defaults are documented (docs/operations.md). */
const TIMEOUT_S = 3;
const IDLE_S = 1;
const BOUND_ARGS = ['--timeout', String(TIMEOUT_S), '--idle-timeout', String(IDLE_S)];
/**
 * A run is timed from its first request to the server to its last connection closed (start-up and
 * exit are not part of the bound); this is what the test allows past the bound for the verifier to
 * act on it on a loaded machine (a load average of 15 on 2 cores was seen while other suites ran).
 * The process must also end: it is killed, and the case fails, at 30 s.
 */
const END_SLACK_S = 2.5;
/** Peak resident memory allowed: the runtime, plus one JSON value held whole (64 MiB) a few times over. */
const MAX_RSS_MIB = { node: 400, python: 250 };

type Run = { code: number | null; lines: string[]; seconds: number; rssMiB: number; killed: boolean };

let runs = 0;
/** A run's own path prefix on the server: `<behaviour>/<run id>`. */
const newRun = (behaviour: string) => `${behaviour}/run-${++runs}`;

/**
 * Runs `argv` under GNU time (its maximum RSS), killed at 30 s should a bound fail to hold; timed
 * from the run's first request to the server to its last connection closed (`talked`), or by the
 * process when it made none.
 */
function run(argv: string[], talked: () => { from?: number | undefined; to?: number | undefined }, cwd?: string): Promise<Run> {
  return new Promise((resolve) => {
    const spawned = Date.now();
    const child = spawn(TIME, ['-f', 'maxrss_kb %M', ...argv], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => { out += d.toString(); });
    child.stderr.on('data', (d: Buffer) => { err += d.toString(); });
    let killed = false;
    const killer = setTimeout(() => { killed = true; child.kill('SIGKILL'); }, 30_000);
    child.on('close', (code) => {
      clearTimeout(killer);
      const exited = Date.now();
      // The server reports over a pipe: give its last lines a moment.
      setTimeout(() => {
        const rss = /maxrss_kb (\d+)/.exec(err);
        const { from, to } = talked();
        resolve({
          code, killed, lines: out.split('\n').filter((l) => l !== ''), seconds: ((to ?? exited) - (from ?? spawned)) / 1000, rssMiB: rss ? Number(rss[1]) / 1024 : Infinity,
        });
      }, 200);
    });
  });
}

/** Runs the cases two at a time (each mostly waits on its bound). */
async function inTurns<T>(items: T[], f: (item: T) => Promise<void>): Promise<void> {
  const queue = [...items];
  await Promise.all(Array.from({ length: 2 }, async () => {
    for (let item = queue.shift(); item !== undefined; item = queue.shift()) await f(item);
  }));
}

function assertFailedClosed(what: string, r: Run, runtime: 'node' | 'python'): void {
  const shown = `${what}: exit ${r.code} in ${r.seconds.toFixed(1)} s, ${r.rssMiB.toFixed(0)} MiB\n${r.lines.join('\n')}`;
  assert.ok(!r.killed, `still running at 30 s: ${shown}`);
  assert.equal(r.code, 2, shown);
  assert.equal(r.lines.length, 1, shown);
  assert.match(r.lines[0]!, /^(verdict: UNUSABLE INPUT: |FAIL )/, shown);
  assert.ok(r.seconds < TIMEOUT_S + END_SLACK_S, `past its bound: ${shown}`);
  assert.ok(r.rssMiB < MAX_RSS_MIB[runtime], `memory: ${shown}`);
}

const SOURCES = { export: 'v1/export?agent=bot', chain: 'v1/chain/bot', proof: 'v1/proof/dec_01HV3K8Q2ZJ9M4W7XAB3CDEF00', log: 'v1/log' };
const cases = HOSTILE_BEHAVIOURS.flatMap((behaviour) => Object.entries(SOURCES).map(([kind, path]) => ({ behaviour, kind, path })));
const peaks: Record<string, number> = {};

describe('verifiers against a hostile server: exit 2, one line, within the bound, memory bounded', () => {
  let server: HostileServer;
  before(async () => { server = await spawnHostileServer(); });
  after(async () => {
    await server.close();
    console.log(`peak RSS (MiB) by verifier: ${JSON.stringify(peaks)}`);
  });
  const peak = (who: string, r: Run) => { peaks[who] = Math.max(peaks[who] ?? 0, Math.round(r.rssMiB)); };
  /** Runs a verifier against `<behaviour>/<run id>/<path>` of the server. */
  const against = (behaviour: string, path: string, argv: (url: string) => string[], cwd?: string) => {
    const id = newRun(behaviour);
    const name = id.split('/')[1]!;
    return run(argv(`${server.url}/${id}/${path}`), () => ({ from: server.firstRequestAt(name), to: server.lastClosedAt(name) }), cwd);
  };

  test('ledger verify: every behaviour against an export, a chain, a proof and the log', async () => {
    await inTurns(cases, async ({ behaviour, kind, path }) => {
      const r = await against(behaviour, path, (url) => ['node', BIN, 'verify', url, ...BOUND_ARGS]);
      peak('ledger verify', r);
      assertFailedClosed(`ledger verify ${kind} (${behaviour})`, r, 'node');
    });
  });

  test('ledger verify --performance: every behaviour', async () => {
    await inTurns([...HOSTILE_BEHAVIOURS], async (behaviour) => {
      const r = await against(behaviour, 'agents/bot', (url) => ['node', BIN, 'verify', '--performance', url, ...BOUND_ARGS]);
      peak('ledger verify --performance', r);
      assertFailedClosed(`ledger verify --performance (${behaviour})`, r, 'node');
    });
  });

  test('python -m decision_ledger verify: every behaviour against an export, a chain, a proof and the log', async () => {
    await inTurns(cases, async ({ behaviour, kind, path }) => {
      const r = await against(behaviour, path, (url) => [PYTHON, '-m', 'decision_ledger', 'verify', url, ...BOUND_ARGS], PYTHON_DIR);
      peak('python verify', r);
      assertFailedClosed(`python verify ${kind} (${behaviour})`, r, 'python');
    });
  });

  test('python -m decision_ledger verify --performance: every behaviour', async () => {
    await inTurns([...HOSTILE_BEHAVIOURS], async (behaviour) => {
      const r = await against(behaviour, 'agents/bot', (url) => [PYTHON, '-m', 'decision_ledger', 'verify', '--performance', url, ...BOUND_ARGS], PYTHON_DIR);
      peak('python verify --performance', r);
      assertFailedClosed(`python verify --performance (${behaviour})`, r, 'python');
    });
  });

  test('the bounds name themselves: a stall names --idle-timeout, a trickle --timeout, a flood --max-json-bytes or --max-bytes, a redirect the other origin', async () => {
    const line = async (behaviour: string, extra: string[] = []) =>
      (await against(behaviour, SOURCES.chain, (url) => ['node', BIN, 'verify', url, ...BOUND_ARGS, ...extra])).lines.join('\n');
    assert.match(await line('stall'), /sent nothing for 1 s \(--idle-timeout\)/);
    assert.match(await line('trickle'), /no result within 3 s \(--timeout\)/);
    assert.match(await line('endless-json', ['--timeout', '30']), /sent more than 64 MiB \(--max-json-bytes\)/);
    assert.match(await line('endless-json', ['--timeout', '30', '--max-json-bytes', '1MiB']), /sent more than 1 MiB \(--max-json-bytes\)/);
    assert.match(await line('endless-ndjson', ['--timeout', '30', '--max-bytes', '2MiB']), /sent more than 2 MiB \(--max-bytes\)/);
    assert.match(await line('huge'), /declares 100663296 bytes, over 64 MiB/);
    assert.match(await line('redirect'), /redirected to http:\/\/localhost:\d+\/redirect\/run-\d+\/v1\/chain\/bot, another origin/);
    assert.match(await line('deep'), /nests JSON deeper than 128 levels/);
  });

  test('raising a bound lets the same answer through: 96 MiB held whole with --max-json-bytes 128MiB, then refused as not a document', async () => {
    const r = await against('huge', SOURCES.chain, (url) => ['node', BIN, 'verify', url, '--timeout', '20', '--max-json-bytes', '128MiB']);
    assert.equal(r.code, 2);
    assert.match(r.lines.join('\n'), /is neither an NDJSON export nor a JSON document/);
  });
});

describe('JSON nested 200,000 deep, from files: each exit code, never a crash', () => {
  type Vector = { agent: string; keys: unknown[]; records: Array<Record<string, unknown> & { seq: number; chain_hash: string; recorded_at: string; content_canonical: string }> };
  const chains = JSON.parse(readFileSync(new URL('../vectors/canon_v1/chains.json', import.meta.url), 'utf8')) as Vector;
  const line = (r: Vector['records'][number]) => JSON.stringify({
    entry: {
      canon: 'canon_v1', agent: chains.agent, seq: String(r.seq), id: r.id, type: r.type, recorded_at: r.recorded_at, content_hash: r.content_hash, prev_hash: r.prev_hash,
      ...(r.signature ? { signature: r.signature } : {}),
    },
    chain_hash: r.chain_hash, content: r.content_canonical,
  });
  const last = chains.records.at(-1)!;
  const header = JSON.stringify({
    object: 'export', format: 'ledger-export-ndjson-v1', canonicalisation: 'canon_v1', algorithm: 'sha256', agent: { handle: chains.agent }, keys: chains.keys,
    head: { seq: last.seq, chain_hash: last.chain_hash, recorded_at: last.recorded_at }, records: chains.records.length,
  });
  const deep = (n: number) => `${'['.repeat(n)}${']'.repeat(n)}`;
  const dir = mkdtempSync(join(tmpdir(), 'verify-deep-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const verifyFile = (name: string, text: string) => {
    const path = join(dir, name);
    writeFileSync(path, text);
    return run(['node', BIN, 'verify', path, '--workers', '0'], () => ({}));
  };

  test('0 intact; 1 when a record nests too deep (record_form, naming its line); 2 and one line when a document does', async () => {
    const lines = chains.records.map(line);
    const intact = await verifyFile('intact.ndjson', `${[header, ...lines].join('\n')}\n`);
    assert.equal(intact.code, 0, intact.lines.join('\n'));
    const record = await verifyFile('deep-record.ndjson', `${[header, lines[0], `{"entry":${deep(200_000)}}`, ...lines.slice(2)].join('\n')}\n`);
    assert.equal(record.code, 1, record.lines.join('\n'));
    assert.match(record.lines.join('\n'), /line 3: record nests JSON deeper than 128 levels/);
    for (const [name, text] of [
      ['deep-header.ndjson', `{"object":"export","x":${deep(200_000)}}\n${lines.join('\n')}`],
      ['deep-proof.json', `{"object":"proof","x":${deep(200_000)}}`],
      ['deep-array.json', deep(200_000)],
    ] as const) {
      const r = await verifyFile(name, text);
      assert.equal(r.code, 2, `${name}\n${r.lines.join('\n')}`);
      assert.equal(r.lines.length, 1, r.lines.join('\n'));
      assert.match(r.lines[0]!, /^verdict: UNUSABLE INPUT: .* nests JSON deeper than 128 levels$/);
    }
  });
});
