// The inputs bundle (GET /v1/agents/{handle}/performance/inputs) and `ledger verify --performance`,
// on both stores: an agent on synthetic prices whose facts the pricing job stored (the synthetic
// corporate actions, then the raw closes), with a dividend learned late (a restatement); the
// bundle streams its documented lines, the verifier computes every figure again and agrees
// (through the command line too), and it fails naming the figure when one close, one corporate
// action or one record's observation of the bundle is altered; it fails naming the record when the
// bundle's records are not the agent's chain (a content changed, a record left out or added,
// another agent's report and inputs served under this agent's name, a chain that does not verify).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { buildApp } from '../../src/api/app.ts';
import { compose } from '../../src/compose.ts';
import { loadConfig } from '../../src/config.ts';
import type { Agent } from '../../src/domain/types.ts';
import { signatureChecker } from '../../src/ledger/signing.ts';
import { MarketFacts } from '../../src/market/facts.ts';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import type { ActionLine, CloseLine, InputsHeader, RecordLine } from '../../src/method/perf/bundle.ts';
import { PerformanceService, storedActions } from '../../src/performance/service.ts';
import { verifyPerformance } from '../../src/verify/performance.ts';
import { chainThrough } from '../../src/verify/inputs-chain.ts';
import { forEachStore } from '../support/stores.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { altering, alteringChain, impersonating, rewriting } from './altering-fetch.ts';
import { DAY, performanceApp, recordYear, type PerformanceApp } from './fixtures.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

type Doc = {
  as_of: string; through_seq: number; series: Array<{ date: string }>; holdings: { positions: Array<{ symbol: string }> };
  corporate_actions: { events: Array<{ provider_id: string; phase: string; type: string; symbol: string }> }; restatement: { actions: Array<{ provider_id: string }> } | null;
};

await forEachStore('performance inputs and ledger verify --performance', (kind) => {
  let app: PerformanceApp;
  let base: string;
  let agent: Agent;
  let doc: Doc;
  let lines: Array<Record<string, unknown>>;
  let closeServer = async () => undefined as void;
  const handle = `verified-${kind.name}`;
  const other = `other-${kind.name}`;

  before(async () => {
    app = await performanceApp(await kind.open(), new SyntheticMarketData('decision-ledger'));
    await recordYear(app, handle, 90);
    agent = (await app.store.findAgentByHandle(handle)) as Agent;
    // the pricing job's facts: each chunk's corporate actions, then its closes
    const facts = new MarketFacts({ store: app.market, providers: { synthetic: app.provider }, benchmark: 'SPY', now: () => app.clock.now() });
    while (!(await facts.step()));
    assert.ok(facts.status().actions_added > 0, 'the synthetic model has corporate actions in these months');
    const performance = new PerformanceService({
      store: app.store, market: app.market, reports: app.reports, provider: app.provider, synthetic: app.provider, benchmark: 'SPY', clock: app.clock, method: 'perf_v2',
      corporateActions: (source, symbols) => storedActions(app.market, source, symbols),
    });
    const first = await performance.report(agent, 'model');
    assert.ok(first.ok && first.value.status === 'computed');
    // a dividend of the largest holding learned now, dated where the report is valued: restated
    const held = first.value.report.holdings.positions[0]!;
    const ex = first.value.report.series.at(-8)!.date;
    app.clock.t += 60_000; // learned after the closes the report valued were stored
    await app.market.saveCorporateActions([{
      provider_id: 'late-dividend', source: 'synthetic', type: 'cash_dividend', symbol: held.symbol, ex_date: ex, payable_date: first.value.report.as_of, process_date: null,
      record_date: null, old_rate: null, new_rate: null, rate: '0.37', special: null, raw: '{"id":"late-dividend"}',
    }], app.clock.now().toISOString());
    app.clock.t += DAY;
    const ledger = await buildApp(compose({ store: app.store, config: loadConfig({ LEDGER_DATABASE_URL: 'sqlite::memory:' }), clock: app.clock, checkSignature: signatureChecker(app.store) }, { performance }));
    base = await ledger.app.listen({ port: 0, host: '127.0.0.1' });
    closeServer = () => ledger.close();
    doc = await (await fetch(`${base}/v1/agents/${handle}/performance`)).json() as Doc;
    const res = await fetch(`${base}/v1/agents/${handle}/performance/inputs?portfolio=model`);
    assert.equal(res.status, 200);
    assert.match(res.headers.get('content-type') ?? '', /^application\/x-ndjson/);
    lines = (await res.text()).trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    // another agent, with a chain of its own (two decisions) and no report
    const created = await new Operators(app.store, app.clock).createAgent({ handle: other });
    assert.ok(created.ok);
    for (const symbol of ['AAPL', 'KO']) assert.equal((await postDecision(app.ledger, created.value.apiKey.secret, { symbol, action: 'BUY' }, idempotencyKey())).statusCode, 201);
  });
  after(async () => {
    await closeServer();
    await app.ledger.close();
    await app.store.close();
    await kind.cleanup();
  });

  describe('the inputs bundle', () => {
    it('is the documented lines of the published report: header, records with observations, actions with revisions, closes with fetched_at, end', () => {
      const header = lines[0] as InputsHeader;
      assert.equal(header.object, 'performance_inputs');
      assert.equal(header.format, 'perf_inputs_v1');
      assert.equal(header.method, 'perf_v2');
      assert.equal(header.through_seq, doc.through_seq);
      assert.equal(header.as_of, doc.as_of);
      const records = lines.filter((l) => l.kind === 'record') as RecordLine[];
      assert.equal(records.length, 90);
      assert.ok(records.every((r) => r.type === 'decision' && r.observation !== null && typeof r.content === 'string'));
      const actions = lines.filter((l) => l.kind === 'corporate_action') as ActionLine[];
      assert.ok(actions.some((a) => a.provider_id === 'late-dividend' && a.revision === 1));
      assert.ok(actions.every((a) => a.revision !== null && a.raw !== null), 'every action given is a stored revision');
      const closes = lines.filter((l) => l.kind === 'close') as CloseLine[];
      assert.ok(closes.some((c) => c.symbol === 'SPY') && closes.some((c) => c.symbol === 'AAPL'));
      assert.ok(closes.every((c) => typeof c.fetched_at === 'string'));
      assert.deepEqual(lines.at(-1), { kind: 'end', records: records.length, corporate_actions: actions.length, closes: closes.length });
      assert.ok(doc.corporate_actions.events.some((e) => e.provider_id !== 'late-dividend'), 'the synthetic actions touched a holding');
      assert.deepEqual(doc.restatement?.actions.map((a) => a.provider_id), ['late-dividend'], 'only the late dividend restates');
    });

    it('answers 404 for an agent without such a report, 400 for a bad portfolio', async () => {
      assert.equal((await fetch(`${base}/v1/agents/${handle}/performance/inputs?portfolio=broker`)).status, 404);
      const bad = await fetch(`${base}/v1/agents/${handle}/performance/inputs?portfolio=cash`);
      assert.equal(bad.status, 400);
      assert.equal(((await bad.json()) as { error: { param?: string } }).error.param, 'portfolio');
    });
  });

  describe('ledger verify --performance', () => {
    it('computes every figure again and agrees, from the site URL and from the API URL', async () => {
      const out: string[] = [];
      assert.equal(await verifyPerformance(`${base}/agents/${handle}`, (l) => out.push(l)), 0, out.join('\n'));
      assert.ok(out.some((l) => l.startsWith('ok   performance model')), out.join('\n'));
      assert.ok(out.some((l) => new RegExp(`^ok   chain of ${handle}: seq 1 to ${doc.through_seq} verify .* the 90 input records are exactly its decision records`).test(l)), out.join('\n'));
      assert.ok(out.some((l) => /^(ok  |note) log: record seq \d+ \(dec_/.test(l)), out.join('\n'));
      assert.equal(await verifyPerformance(`${base}/v1/agents/${handle}/performance?portfolio=model`, () => undefined), 0);
    });

    it('through the command line: exit 0', async () => {
      const run = await promisify(execFile)(process.execPath, [BIN, 'verify', '--performance', `${base}/agents/${handle}`], { encoding: 'utf8' });
      assert.match(run.stdout, /every figure computed again/);
    });

    const fails = async (alter: (line: Record<string, unknown>) => boolean): Promise<string> => {
      const out: string[] = [];
      assert.equal(await verifyPerformance(`${base}/agents/${handle}`, (l) => out.push(l), altering(alter)), 1, out.join('\n'));
      return out.find((l) => l.startsWith('FAIL')) ?? '';
    };

    it('fails on inputs that are not the report\'s: another agent\'s, or a synthetic label that contradicts the report', async () => {
      const header = (l: Record<string, unknown>) => l.object === 'performance_inputs';
      assert.match(await fails((l) => header(l) && Boolean(l.agent = 'another-agent')), /the inputs are of agent "another-agent", not "/);
      assert.match(await fails((l) => header(l) && ((l.synthetic = !l.synthetic), true)), /the report says synthetic: (true|false), its inputs synthetic: (true|false)/);
    });

    const failsWith = async (fetcher: typeof fetch, url = `${base}/agents/${handle}`): Promise<string> => {
      const out: string[] = [];
      assert.equal(await verifyPerformance(url, (l) => out.push(l), fetcher), 1, out.join('\n'));
      return out.find((l) => l.startsWith('FAIL')) ?? '';
    };
    const recordLines = (all: Array<Record<string, unknown>>) => all.filter((l) => l.kind === 'record') as RecordLine[];
    const recounted = (all: Array<Record<string, unknown>>) => {
      const end = all.at(-1)!;
      end.records = recordLines(all).length;
      return all;
    };

    it('fails naming the record when a record\'s content is not the chain\'s', async () => {
      const fail = await fails((l) => l.kind === 'record' && l.chain_seq === 7 && Boolean(l.content = (l.content as string).replace('fixture decision', 'fixture decisions')));
      assert.match(fail, /^FAIL performance model: record seq 7 \(dec_[0-9A-Za-z]+\) of the inputs: its content hashes to [0-9a-f]{64}, the chain's content_hash is [0-9a-f]{64}$/, fail);
    });

    it('fails naming the record when one is left out, repeated or added past through_seq', async () => {
      const dropped = recordLines(lines)[4]!;
      const left = await failsWith(rewriting((all) => recounted(all.filter((l) => !(l.kind === 'record' && l.chain_seq === dropped.chain_seq)))));
      assert.equal(left, `FAIL performance model: record seq ${dropped.chain_seq} (${dropped.id}), the chain's decision, is not in the inputs: left out`);
      const repeated = await failsWith(rewriting((all) => {
        const i = all.findIndex((l) => l.kind === 'record' && l.chain_seq === 10);
        all.splice(i + 1, 0, { ...all[i]! });
        return recounted(all);
      }));
      assert.match(repeated, /^FAIL performance model: record seq 10 \(dec_\w+\) of the inputs comes after seq 10: a record added, repeated or out of chain order$/, repeated);
      const past = await failsWith(rewriting((all) => {
        const last = recordLines(all).at(-1)!;
        all.splice(all.indexOf(last as unknown as Record<string, unknown>) + 1, 0, { ...last, chain_seq: doc.through_seq + 1 });
        return recounted(all);
      }));
      assert.match(past, new RegExp(`^FAIL performance model: record seq ${doc.through_seq + 1} \\(dec_\\w+\\) of the inputs is past the report's through_seq ${doc.through_seq}$`), past);
    });

    it('fails naming the record on another agent\'s report and inputs served under this agent\'s name', async () => {
      const first = recordLines(lines)[0]!;
      const fail = await failsWith(impersonating(handle, other), `${base}/agents/${other}`);
      assert.match(fail, new RegExp(`^FAIL performance model: record seq 1 \\(${first.id}\\) of the inputs: the chain's record at seq 1 is dec_\\w+$`), fail);
    });

    it('fails naming the record when the agent\'s chain does not verify', async () => {
      const fail = await failsWith(alteringChain((r) => r.entry.seq === '3' && Boolean(r.content = r.content!.replace('fixture decision', 'fixture decisions'))));
      assert.match(fail, new RegExp(`^FAIL performance model: the agent's chain does not verify through seq ${doc.through_seq}: content_bytes at seq 3 dec_\\w+: sha256 of the content text is`), fail);
    });

    it('fails naming the record when its proof bundle is not the chain\'s record at through_seq', async () => {
      const last = recordLines(lines).at(-1)!;
      const proofAltered: typeof fetch = async (input, init) => {
        const res = await fetch(input, init);
        if (!String(input).includes('/v1/proof/')) return res;
        const bundle = (await res.json()) as { record: { chain_hash: string } };
        bundle.record.chain_hash = '0'.repeat(64);
        return new Response(JSON.stringify(bundle), { status: res.status, headers: { 'content-type': 'application/json' } });
      };
      const fail = await failsWith(proofAltered);
      assert.match(fail, new RegExp(`^FAIL performance model: the global log: record seq ${doc.through_seq} \\(${last.id}\\): its proof bundle holds chain_hash 0{64}, the chain [0-9a-f]{64}$`), fail);
    });

    it('reads the chain only through through_seq, page by page (worker threads past the first chunk)', async () => {
      const asked: string[] = [];
      const counting: typeof fetch = async (input, init) => {
        asked.push(String(input));
        return fetch(input, init);
      };
      const chain = await chainThrough(base, handle, 45, counting, 10);
      assert.ok(chain.verification.ok, JSON.stringify(chain.verification.checks.filter((c) => c.ok === false)));
      assert.deepEqual([...chain.records.keys()], Array.from({ length: 45 }, (_, i) => i + 1));
      assert.equal(asked.length, 5, asked.join('\n'));
      assert.equal(chain.verification.records, 45);
    });

    it('fails naming the figure when one close is altered', async () => {
      const symbol = doc.holdings.positions[0]!.symbol;
      const last = doc.series.at(-1)!.date;
      const fail = await fails((l) => l.kind === 'close' && l.symbol === symbol && l.date === last && Boolean(l.close = String(Number(l.close) * 1.5)));
      assert.match(fail, new RegExp(`series\\[${doc.series.length - 1}\\] \\(${last}\\)\\.value: published "[0-9.]+", recomputed "[0-9.]+"`), fail);
    });

    it('fails naming the figure when one corporate action is altered', async () => {
      const event = doc.corporate_actions.events.find((e) => e.phase === 'ex' && e.type === 'cash_dividend' && e.provider_id !== 'late-dividend')!;
      const fail = await fails((l) => l.kind === 'corporate_action' && l.provider_id === event.provider_id && Boolean(l.rate = String(Number(l.rate) * 2)));
      assert.match(fail, /corporate_actions\.events\[\d+\]\.(rate|amount): published/, fail);
    });

    it('fails naming the figure when one record is altered', async () => {
      const fail = await fails((l) => {
        if (l.kind !== 'record') return false;
        const o = l.observation as { status: string; price?: string };
        if (o.status !== 'priced' || !(l.content as string).includes('"BUY"')) return false;
        o.price = String(Number(o.price) * 0.9);
        return true;
      });
      assert.match(fail, /^FAIL performance model \(benchmark total return\): [a-z_.[\]0-9 ()-]+: published .*, recomputed /, fail);
    });

    it('fails naming the restatement when the closes of the late action are said stored after it', async () => {
      const late = lines.find((l) => l.kind === 'corporate_action' && l.provider_id === 'late-dividend') as ActionLine;
      const fail = await fails((l) => {
        if (l.kind !== 'close' || l.symbol !== late.symbol || (l.date as string) < (late.ex_date as string)) return false;
        l.fetched_at = '2099-01-01T00:00:00.000Z';
        return true;
      });
      assert.match(fail, /restatement: published \{.*late-dividend.*\}, recomputed null/, fail);
    });
  });
});
