// Faulty witnesses never block the record path or the log (issue 26 acceptance), on both stores:
// with the integrator and the witnessing job running, a witness that hangs (accepts and never
// answers, with a per-request timeout far longer than the test), one that answers 500 and one that
// answers garbage with 200 sit in the policy beside a good one. Writes keep answering 201, the log
// keeps signing checkpoints, the good witness cosigns each while the hung request is still open,
// and each bad witness's error is on /v1/transparency.
import assert from 'node:assert/strict';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { after, before, it } from 'node:test';
import { parseWitnessPolicy } from '../../src/core/witness-policy.ts';
import { WitnessingJob } from '../../src/log/witnessing.ts';
import type { Integrator } from '../../src/log/integrator.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { logList, seededWitnessKey, startTestWitness, value } from '../witness/helpers.ts';
import { record, testIntegrator, testLogKey } from '../log/helpers.ts';

const GOOD = seededWitnessKey('good.test/witness', 0x21);
const HANG = seededWitnessKey('hang.test/witness', 0x22);
const ERR = seededWitnessKey('err.test/witness', 0x23);
const JUNK = seededWitnessKey('junk.test/witness', 0x24);

type Faulty = { url: string; open: () => number; stop: () => Promise<void> };

/** A witness stand-in: `answer` handles each request (or leaves it hanging). */
async function faultyWitness(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Faulty> {
  let open = 0;
  const server: Server = createServer((req, res) => {
    open++;
    res.on('close', () => { open--; });
    req.resume();
    req.on('end', () => answer(req, res));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
    open: () => open,
    stop: () => new Promise<void>((r) => {
      server.close(() => r());
      server.closeAllConnections();
    }),
  };
}

type Doc = { log: { tree_size: number; witnesses: { checkpoint: { quorum_satisfied: boolean; cosigned_by: string[] } | null; witnesses: { name: string; last_cosigned_size: number | null; last_error: string | null }[] } } };

await forEachStore('faulty witnesses block neither writes nor the log', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let integrator: Integrator;
  let job: WitnessingJob;
  let good: Awaited<ReturnType<typeof startTestWitness>>;
  let hang: Faulty;
  let err: Faulty;
  let junk: Faulty;

  before(async () => {
    store = await kind.open();
    const { key } = await testLogKey();
    good = await startTestWitness({ list: logList(key.vkey), key: GOOD, now: () => Math.floor(Date.now() / 1000) });
    hang = await faultyWitness(() => undefined);
    err = await faultyWitness((_req, res) => res.writeHead(503, { 'content-type': 'text/plain' }).end('overloaded\n'));
    junk = await faultyWitness((_req, res) => res.writeHead(200, { 'content-type': 'text/plain' }).end('\u0000\u0001 not a cosignature at all'));
    const policy = value(parseWitnessPolicy([
      `witness good ${GOOD.vkey} ${good.url}`,
      `witness hang ${HANG.vkey} ${hang.url}`,
      `witness err ${ERR.vkey} ${err.url}`,
      `witness junk ${JUNK.vkey} ${junk.url}`,
      'group any-one any good hang err junk',
      'quorum any-one',
    ].join('\n')));
    t = await testApp(store, { witnessPolicy: policy, logVkey: key.vkey });
    integrator = testIntegrator(store, key, { batchWindowMs: 20, pollMs: 10 });
    integrator.start();
    job = new WitnessingJob({ policy, log: store.log, cosignatures: store.cosignatures, timeoutMs: 600_000, pollMs: 20, minBackoffMs: 200 });
    job.start();
  });

  after(async () => {
    await job.stop();
    await integrator.stop();
    for (const w of [good, hang, err, junk]) await w.stop();
    await t.close();
    await store.close();
    await kind.cleanup();
  });

  const transparency = async () => (await t.app.inject({ method: 'GET', url: '/v1/transparency' })).json() as Doc;

  /** Waits until the log holds `size` records and the good witness cosigned that size. */
  async function cosignedByGood(size: number): Promise<Doc> {
    const deadline = Date.now() + 30_000;
    for (;;) {
      const doc = await transparency();
      const g = doc.log.witnesses.witnesses.find((w) => w.name === 'good');
      if (doc.log.tree_size === size && g?.last_cosigned_size === size) return doc;
      if (Date.now() > deadline) throw new Error(`not cosigned at ${size}: ${JSON.stringify(doc.log)}`);
      await new Promise((r) => setTimeout(r, 20));
    }
  }

  it('writes answer 201 and each checkpoint is cosigned by the good witness while the hung one holds a request open', async () => {
    const { secret } = await t.agent();
    await record(t, secret, 4);
    let doc = await cosignedByGood(4);
    assert.deepEqual(doc.log.witnesses.checkpoint, { quorum_satisfied: true, cosigned_by: ['good'] });
    assert.equal(hang.open(), 1, 'the hung witness holds its first request open');

    await record(t, secret, 3);
    doc = await cosignedByGood(7);
    assert.equal(hang.open(), 1, 'still the same hung request: the log went on without it');
    const state = Object.fromEntries(doc.log.witnesses.witnesses.map((w) => [w.name, w]));
    assert.equal(state.hang!.last_cosigned_size, null);
    assert.equal(state.hang!.last_error, null, 'a request in flight is not an error yet');
    assert.match(state.err!.last_error ?? '', /answered 503: overloaded/);
    assert.match(state.junk!.last_error ?? '', /answered 200 without signature lines|no signature lines/);
    assert.equal(state.err!.last_cosigned_size, null);
    assert.equal(state.junk!.last_cosigned_size, null);
  });
});
