// A split view caught by a witness (issue 26 acceptance). Two ledgers sign with the SAME log key
// (test harness only: a forked history, what a dishonest operator would show some visitors): the
// honest one's checkpoints are cosigned by the witness; the fork's are refused by it as the protocol
// says (409 with the witness's size, then 422 for a proof that does not hold), the fork's witness
// state says so, and `ledger verify <log> --witness <vkey> --quorum 1` refuses the forked checkpoint
// while it passes the honest one.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { after, before, it } from 'node:test';
import { consistencyPlan, planNodes, readProof, type Hash } from '../../src/core/merkle.ts';
import { parseWitnessPolicy, type WitnessPolicy } from '../../src/core/witness-policy.ts';
import { addCheckpoint } from '../../src/log/witness-client.ts';
import { TileReader } from '../../src/log/tree.ts';
import { WitnessingJob } from '../../src/log/witnessing.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { logList, seededWitnessKey, startTestWitness, value } from '../witness/helpers.ts';
import { record, testIntegrator, testLogKey } from './helpers.ts';
import { parseCosignerVkey } from '../../src/core/cosignature.ts';

const BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));
const W = seededWitnessKey('split.test/witness', 0x31);

type Ledger = { store: LedgerStore; t: TestApp; url: string; job: WitnessingJob; stopIntegrator: () => Promise<void>; integrate: () => Promise<number> };

async function verifyCli(args: string[]): Promise<{ code: number; out: string }> {
  try {
    const { stdout } = await promisify(execFile)(process.execPath, [BIN, 'verify', ...args], { encoding: 'utf8' });
    return { code: 0, out: stdout };
  } catch (e) {
    const err = e as { code: number; stdout: string };
    return { code: err.code, out: err.stdout };
  }
}

await forEachStore('a split view refused by the witness', (kind) => {
  let witness: Awaited<ReturnType<typeof startTestWitness>>;
  let policy: WitnessPolicy;
  const ledgers: Ledger[] = [];

  async function ledger(key: Awaited<ReturnType<typeof testLogKey>>['key']): Promise<Ledger> {
    const store = await kind.open();
    const t = await testApp(store, { witnessPolicy: policy, logVkey: key.vkey });
    const url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    const integrator = testIntegrator(store, key);
    const job = new WitnessingJob({ policy, log: store.log, cosignatures: store.cosignatures, timeoutMs: 5_000 });
    const l = { store, t, url, job, stopIntegrator: () => integrator.stop(), integrate: () => integrator.integratePending() };
    ledgers.push(l);
    return l;
  }

  let honest: Ledger;
  let fork: Ledger;

  before(async () => {
    const { key } = await testLogKey();
    witness = await startTestWitness({ list: logList(key.vkey), key: W, now: () => Math.floor(Date.now() / 1000) });
    policy = value(parseWitnessPolicy(`witness W ${W.vkey} ${witness.url}\nquorum W\n`));
    honest = await ledger(key);
    fork = await ledger(key);
  });

  after(async () => {
    for (const l of ledgers) {
      await l.job.stop();
      await l.stopIntegrator();
      await l.t.close();
      await l.store.close();
    }
    await witness.stop();
    await kind.cleanup();
  });

  it('the witness cosigns the honest history and refuses the fork (409 then 422); verify --quorum 1 refuses the forked checkpoint', async () => {
    await record(honest.t, (await honest.t.agent()).secret, 3);
    await honest.integrate();
    await honest.job.askNow();

    // The fork: other records under the same log key, a tree of 5.
    await record(fork.t, (await fork.t.agent()).secret, 5);
    await fork.integrate();
    const forked = (await fork.store.log.latestCheckpoint())!;
    assert.equal(forked.treeSize, 5);
    const vkey = value(parseCosignerVkey(W.vkey));
    const fresh = await addCheckpoint(witness.url, { old: 0, proof: [], note: forked.note }, vkey, { timeoutMs: 5_000 });
    assert.deepEqual(fresh, { kind: 'size', size: 3 }, 'the witness answers 409 with the size it cosigned');
    const plan = value(consistencyPlan(3, 5));
    const proof: Hash[] = value(readProof(plan, await new TileReader(fork.store.log).readerFor(planNodes(plan))));
    const refused = await addCheckpoint(witness.url, { old: 3, proof, note: forked.note }, vkey, { timeoutMs: 5_000 });
    assert.equal(refused.kind, 'inconsistent');
    assert.equal(refused.kind === 'inconsistent' && refused.status, 422);

    // The fork's own witnessing job meets the same refusal and says so.
    await fork.job.askNow();
    const doc = (await fork.t.app.inject({ method: 'GET', url: '/v1/transparency' })).json();
    assert.deepEqual(doc.log.witnesses.checkpoint, { quorum_satisfied: false, cosigned_by: [] });
    assert.match(doc.log.witnesses.witnesses[0].last_error, /refused checkpoint 5 as inconsistent .*422/);

    const forkedRun = await verifyCli([`${fork.url}/v1/log`, '--witness', W.vkey, '--quorum', '1']);
    assert.equal(forkedRun.code, 1, forkedRun.out);
    assert.match(forkedRun.out, /FAIL +witnesses/);
    assert.match(forkedRun.out, /does not carry valid cosignatures satisfying the witness policy/);
    const honestRun = await verifyCli([`${honest.url}/v1/log`, '--witness', W.vkey, '--quorum', '1']);
    assert.equal(honestRun.code, 0, honestRun.out);
    assert.match(honestRun.out, /ok +witnesses +the checkpoint is cosigned by split\.test\/witness/);
  });
});
