// The client in a browser: `decision-ledger/client` bundled by esbuild for the browser platform
// (package.json's `browser` map swaps the core's node:crypto seams for src/client/browser/), with
// no Node module left in the bundle, then run in a fresh JavaScript realm that has only web
// globals (fetch, WebCrypto, TextEncoder, URL, AbortSignal, timers: no process, Buffer or
// require), where it creates and registers a key, records a signed decision against a real
// service and verifies its proof and the agent's export.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';
import { build } from 'esbuild';
import { forEachStore } from '../support/stores.ts';
import { closeTestApp } from '../support/app.ts';
import { serve, type Served } from './support.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** The client as a browser bundle (IIFE exposing `Ledger`), and the modules it holds. */
async function browserBundle(): Promise<{ code: string; inputs: string[] }> {
  const result = await build({
    stdin: { contents: "export * from 'decision-ledger/client';", resolveDir: ROOT, loader: 'js' },
    bundle: true, platform: 'browser', format: 'iife', globalName: 'Ledger', write: false, metafile: true, logLevel: 'silent',
  });
  return { code: result.outputFiles[0]!.text, inputs: Object.keys(result.metafile.inputs) };
}

/** A realm with the web platform's globals only. */
function browserRealm(): vm.Context {
  return vm.createContext({
    fetch, Request, Response, Headers, URL, URLSearchParams, TextEncoder, TextDecoder, AbortController, AbortSignal,
    ReadableStream, crypto: globalThis.crypto, setTimeout, clearTimeout, console, structuredClone, atob, btoa, queueMicrotask,
  });
}

test('the browser bundle holds no Node module and swaps both core seams', async () => {
  const { code, inputs } = await browserBundle();
  assert.ok(inputs.includes('dist/client/browser/sha256.js') && inputs.includes('dist/client/browser/ed25519.js'), inputs.join('\n'));
  assert.ok(!inputs.some((i) => /^dist\/core\/(sha256|ed25519)\.js$/.test(i)), 'the node:crypto seams are not bundled');
  assert.ok(!inputs.some((i) => i.startsWith('node:')), 'no node: module');
  assert.doesNotMatch(code, /require\(["']node:/);
});

await forEachStore('the client in a browser realm', (kind) => {
  let s: Served;
  before(async () => {
    s = await serve(kind);
  });
  after(() => closeTestApp(s, kind));

  test('records a locally signed decision and verifies its proof and the export', async () => {
    const { handle, secret } = await s.agent();
    const realm = browserRealm();
    vm.runInContext((await browserBundle()).code, realm);
    realm.input = { baseUrl: s.baseUrl, apiKey: secret, handle };
    const out = await vm.runInContext(`(async () => {
      const { LedgerClient, LedgerApiError } = Ledger;
      const client = new LedgerClient({ baseUrl: input.baseUrl, apiKey: input.apiKey });
      const { key, pair } = await client.createSigningKey('browser key');
      const signer = { agent: input.handle, keyId: key.id, secretKey: pair.secretKey };
      const d = await client.recordDecision({ symbol: 'AAPL', action: 'BUY', quantity: 1.5, metadata: { p: 0.25 } }, { signer });
      const proof = await client.verifyRecord(d.id);
      const chain = await client.verifyAgent(input.handle);
      const bundle = await client.getProof(d.id);
      bundle.record.content = bundle.record.content.replace('"1.5"', '"2.5"');
      const tampered = await Ledger.verifyDocument(bundle);
      let error = null;
      try { await client.getAgent('no-such-agent-here'); } catch (e) { error = { isApi: e instanceof LedgerApiError, code: e.code, param: e.param, status: e.status }; }
      return JSON.stringify({
        signed: d.verification.agent_signed, proof: proof.ok,
        signature: proof.checks.find((c) => c.name === 'signature').summary, chain: chain.ok, records: chain.records,
        tampered: tampered.ok, error, hasProcess: typeof process, hasBuffer: typeof Buffer,
      });
    })()`, realm) as string;
    const r = JSON.parse(out);
    assert.equal(r.hasProcess, 'undefined');
    assert.equal(r.hasBuffer, 'undefined');
    assert.equal(r.signed, true);
    assert.equal(r.proof, true);
    assert.match(r.signature, /1 checked, 0 failed/);
    assert.equal(r.chain, true);
    assert.equal(r.records, 1);
    assert.equal(r.tampered, false);
    assert.deepEqual(r.error, { isApi: true, code: 'not_found', param: 'handle', status: 404 });
  });
});
