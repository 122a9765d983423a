// The client benchmark: what decision-ledger/client costs per recorded decision against a bare
// `fetch` doing the same POST, on the same server in the same run. Four callers record decisions
// one after another (an agent records, then trades), in rounds whose order alternates so the
// machine's drift lands on each alike:
//   bare fetch      JSON.stringify, a random Idempotency-Key, fetch, read the JSON answer;
//   client          LedgerClient.recordDecision (the key kept across retries, typed errors);
//   bare signed     the same, signing by hand: examples/canon-payload.mjs builds the payload,
//                   node:crypto signs (the fastest way a Node caller has);
//   client signed   recordDecision with a signer: the core builds the payload, @noble/ed25519
//                   signs over WebCrypto (what runs in a browser too).
// Figures per round: wall milliseconds per decision and the caller's CPU microseconds per decision
// (process.cpuUsage of this process, where the callers run; the service is a child process).
// Headline: the client's time per decision / the bare fetch's, median over rounds (goal ≤ 1.1).
import { createPrivateKey, randomUUID, sign } from 'node:crypto';
import { cpus } from 'node:os';
import { LedgerClient, secretKeyFromText, type DecisionFields, type Signer } from '../src/client/index.ts';
import { decisionPayload } from '../examples/canon-payload.mjs';
import { benchPath, fixed, integerFlag, markdownTable, progress, startChild, suiteFlags, type ChildServer } from './harness.ts';
import { benchStores, freshPostgres, freshSqlite, serviceEnv, storeName, type BenchDatabase } from './databases.ts';
import { createAgents, DECISION, type BenchAgent } from './decision-load.ts';
import { median, medianInterval } from './stats.ts';

const GOAL = 1.1;

export type ClientBenchOptions = { rounds: number; decisions: number; warmup: number; postgres: boolean };

export function clientOptions(argv: string[]): ClientBenchOptions {
  const v = suiteFlags(argv, {
    rounds: { type: 'string', default: '12' },
    decisions: { type: 'string', default: '200' },
    warmup: { type: 'string', default: '1' },
    'no-postgres': { type: 'boolean', default: false },
  });
  return {
    rounds: integerFlag('rounds', v.rounds, 1),
    decisions: integerFlag('decisions', v.decisions, 1),
    warmup: integerFlag('warmup', v.warmup, 0),
    postgres: !v['no-postgres'],
  };
}

type Caller = { label: string; record: (i: number) => Promise<void> };
type Sample = { msPerDecision: number; cpuUsPerDecision: number };

const decision = (i: number): DecisionFields => ({ ...(DECISION as DecisionFields), quantity: String(1 + (i % 97)) });

function callers(baseUrl: string, agent: BenchAgent): Caller[] {
  const url = `${baseUrl}/decisions`;
  const headers = (key: string) => ({ authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json', 'idempotency-key': key });
  const post = async (body: string) => {
    const res = await fetch(url, { method: 'POST', headers: headers(randomUUID()), body });
    const answer = (await res.json()) as { id?: string };
    if (res.status !== 201 || !answer.id) throw new Error(`bare fetch: ${res.status} ${JSON.stringify(answer)}`);
  };
  const secretKey = secretKeyFromText(agent.privateKey.export({ format: 'jwk' }).d!);
  const nodeKey = createPrivateKey(agent.privateKey.export({ format: 'pem', type: 'pkcs8' }));
  const signer: Signer = { agent: agent.handle, keyId: agent.keyId, secretKey };
  const client = new LedgerClient({ baseUrl, apiKey: agent.secret });
  return [
    { label: 'bare fetch', record: (i) => post(JSON.stringify(decision(i))) },
    { label: 'client', record: async (i) => void (await client.recordDecision(decision(i))) },
    {
      label: 'bare fetch, signed by hand',
      record: (i) => {
        const fields = decision(i);
        const nonce = randomUUID();
        const payload = decisionPayload({ agent: agent.handle, fields, nonce });
        const signature = sign(null, Buffer.from(payload), nodeKey).toString('base64url');
        return post(JSON.stringify({ ...fields, signature: { key_id: agent.keyId, nonce, signature } }));
      },
    },
    { label: 'client, signed', record: async (i) => void (await client.recordDecision(decision(i), { signer })) },
  ];
}

/** One decision by one caller: its wall time and this process's CPU time. */
async function timedCall(caller: Caller, i: number, into: Sample): Promise<void> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  await caller.record(i);
  into.msPerDecision += performance.now() - started;
  const used = process.cpuUsage(cpu);
  into.cpuUsPerDecision += used.user + used.system;
}

/**
 * One round: `n` turns, each recording one decision per caller, the callers' order rotating every
 * turn, so every caller meets the same server state and the same neighbours on the machine.
 */
async function round(list: Caller[], n: number, offset: number): Promise<Sample[]> {
  const totals = list.map(() => ({ msPerDecision: 0, cpuUsPerDecision: 0 }));
  for (let turn = 0; turn < n; turn++) {
    for (let k = 0; k < list.length; k++) {
      const i = (turn + k) % list.length;
      await timedCall(list[i]!, offset + turn * list.length + k, totals[i]!);
    }
  }
  return totals.map((t) => ({ msPerDecision: t.msPerDecision / n, cpuUsPerDecision: t.cpuUsPerDecision / n }));
}

type StoreResult = { kind: BenchDatabase['kind']; labels: string[]; samples: Sample[][] };

async function benchStore(kind: BenchDatabase['kind'], o: ClientBenchOptions): Promise<StoreResult> {
  const db = kind === 'sqlite' ? freshSqlite() : freshPostgres();
  let server: ChildServer | null = null;
  try {
    const [agent] = await createAgents(db.url, 1);
    server = await startChild(benchPath('server-under-test.ts'), serviceEnv(db.url, { LEDGER_WRITE_LIMIT_PER_MIN: '1000000000' }));
    const list = callers(`${server.url}/v1`, agent!);
    const samples: Sample[][] = list.map(() => []);
    for (let r = -o.warmup; r < o.rounds; r++) {
      const figures = await round(list, o.decisions, (r + o.warmup) * o.decisions * list.length);
      if (r < 0) continue;
      figures.forEach((f, i) => samples[i]!.push(f));
      progress(`${storeName(kind)} round ${r + 1}/${o.rounds}: ${list.map((c, i) => `${c.label} ${fixed(figures[i]!.msPerDecision, 3)} ms`).join(', ')}`);
    }
    return { kind, labels: list.map((c) => c.label), samples };
  } finally {
    await server?.stop();
    await db.remove();
  }
}

function interval(values: number[], digits: number): string {
  const m = medianInterval(values);
  return m ? `${fixed(m.low, digits)} to ${fixed(m.high, digits)}` : 'too few rounds';
}

function storeReport(r: StoreResult): { table: string; verdicts: string[] } {
  const ratio = (a: number, b: number, of: keyof Sample) => r.samples[a]!.map((s, k) => s[of] / r.samples[b]![k]![of]);
  const rows = r.labels.map((label, i) => {
    const base = i % 2 === 1 ? i - 1 : i;
    const ms = r.samples[i]!.map((s) => s.msPerDecision);
    const cpu = r.samples[i]!.map((s) => s.cpuUsPerDecision);
    return [
      label, fixed(median(ms), 3), fixed(median(cpu), 0),
      i === base ? '1.00' : `${fixed(median(ratio(i, base, 'msPerDecision')), 3)} (${interval(ratio(i, base, 'msPerDecision'), 3)})`,
      i === base ? '1.00' : fixed(median(ratio(i, base, 'cpuUsPerDecision')), 2),
    ];
  });
  const verdicts = [1, 3].map((i) => {
    const m = median(ratio(i, i - 1, 'msPerDecision'));
    return `${storeName(r.kind)}, ${r.labels[i]}: ${fixed(m, 3)}× the time of ${r.labels[i - 1]} per decision, goal ≤ ${GOAL}: ${m <= GOAL ? 'met' : 'NOT met'}`;
  });
  const table = markdownTable(
    ['caller', 'ms / decision', 'caller CPU µs / decision', 'time ratio (95% interval)', 'CPU ratio'],
    rows,
  );
  return { table: `### ${storeName(r.kind)}\n\n${table}`, verdicts };
}

export async function clientBench(o: ClientBenchOptions): Promise<string> {
  const notes: string[] = [];
  const results: StoreResult[] = [];
  for (const kind of await benchStores(o.postgres, notes)) results.push(await benchStore(kind, o));
  const reports = results.map(storeReport);
  return [
    '## Client overhead per recorded decision',
    '',
    `${o.rounds} rounds of ${o.decisions} decisions per caller, one at a time, the callers taking turns in rotating order, after ${o.warmup} warm-up round(s); `
      + `Node ${process.version}, ${cpus().length} CPUs. Ratios are client / bare fetch within a round; medians over rounds.`,
    ...notes.map((n) => `Note: ${n}`),
    '',
    ...reports.map((r) => r.table + '\n'),
    ...reports.flatMap((r) => r.verdicts).map((v) => `- ${v}`),
  ].join('\n');
}
