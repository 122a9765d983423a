// Verify in this browser, with witnesses (issue 26 scope 3), in a real browser on both stores: a
// ledger with a policy of two witnesses, one of them down; the record's checkpoint is cosigned by
// the other. The browser checks the cosignature under the vkey /v1/transparency lists and names who
// cosigned; the record page and /transparency show the witness state. A bundle that claims a
// cosignature the checkpoint does not carry fails the witnesses check.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { Browser } from 'playwright-core';
import { parseWitnessPolicy } from '../../src/core/witness-policy.ts';
import { WitnessingJob } from '../../src/log/witnessing.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { forEachStore } from '../support/stores.ts';
import { logList, seededWitnessKey, startTestWitness, value } from '../witness/helpers.ts';
import { record, testIntegrator, testLogKey } from '../log/helpers.ts';
import { chromiumSkip, launch, open, verdict, WIDTHS } from './browser.ts';

const skip = chromiumSkip();
const UP = seededWitnessKey('up.test/witness', 0x51);
const DOWN = seededWitnessKey('down.test/witness', 0x52);

await forEachStore('Verify in this browser, with witnesses', (kind) => {
  let store: LedgerStore;
  let t: TestApp;
  let url: string;
  let browser: Browser;
  let witness: Awaited<ReturnType<typeof startTestWitness>>;
  let job: WitnessingJob;
  let id: string;

  before(async () => {
    if (skip) return;
    store = await kind.open();
    const { key } = await testLogKey();
    witness = await startTestWitness({ list: logList(key.vkey), key: UP, now: () => Math.floor(Date.now() / 1000) });
    const policy = value(parseWitnessPolicy(`witness up ${UP.vkey} ${witness.url}\nwitness down ${DOWN.vkey} http://127.0.0.1:9\ngroup one any up down\nquorum one\n`));
    t = await testApp(store, { witnessPolicy: policy, logVkey: key.vkey, env: { LEDGER_READ_LIMIT_PER_MIN: '1000000' } });
    url = await t.app.listen({ port: 0, host: '127.0.0.1' });
    [id] = await record(t, (await t.agent()).secret, 2) as [string];
    const integrator = testIntegrator(store, key);
    await integrator.integratePending();
    await integrator.stop();
    job = new WitnessingJob({ policy, log: store.log, cosignatures: store.cosignatures, timeoutMs: 2_000 });
    await job.askNow();
    browser = await launch();
  });

  after(async () => {
    await browser?.close();
    await job?.stop();
    await witness?.stop();
    await t?.close();
    await store?.close();
    await kind.cleanup();
  });

  describe('witness cosignatures', { skip }, () => {
    test('are checked in the browser under the listed vkeys, and named', async () => {
      const { page, context, errors } = await open(browser, `${url}/records/${id}`, WIDTHS.desktop);
      try {
        assert.match(await page.textContent('main') ?? '', /quorum met\s+Cosigned by up\./);
        const v = await verdict(page);
        assert.equal(v.verdict, 'pass', JSON.stringify(v));
        assert.equal(v.checks.witnesses, 'true');
        const detail = await page.textContent('[data-check="witnesses"]');
        assert.match(detail ?? '', /cosigned by up \(\d{4}-\d\d-\d\dT[^)]*\), each verified here; not yet by down; the service says the quorum is met/);
        assert.deepEqual(errors, []);
      } finally {
        await context.close();
      }
    });

    test('fail when the bundle claims a cosignature the checkpoint does not carry', async () => {
      const { page, context } = await open(browser, `${url}/records/${id}`, WIDTHS.desktop);
      try {
        await page.route('**/v1/proof/**', async (route) => {
          const res = await route.fetch();
          const body = JSON.parse(await res.text());
          body.inclusion_proof.witnessed.cosigned_by.push('down');
          await route.fulfill({ response: res, body: JSON.stringify(body) });
        });
        const v = await verdict(page);
        assert.equal(v.verdict, 'fail', JSON.stringify(v));
        assert.equal(v.checks.witnesses, 'false');
        assert.match(await page.textContent('[data-check="witnesses"]') ?? '', /says down cosigned, but no such cosignature/);
      } finally {
        await context.close();
      }
    });

    test('the transparency page shows each witness\'s state', async () => {
      const { page, context } = await open(browser, `${url}/transparency`, WIDTHS.desktop);
      try {
        const text = await page.textContent('main') ?? '';
        assert.match(text, /Witnesses/);
        assert.match(text, /quorum met\s+Cosigned by up \(quorum: any of up, down\)|quorum met\s+Cosigned by up \(quorum: 1 of up, down\)/);
        assert.match(text, /failing \(1\)/);
      } finally {
        await context.close();
      }
    });
  });
});
