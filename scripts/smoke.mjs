#!/usr/bin/env node
// Smoke run of the real service on whatever Node runs this script: start `ledger serve` on a
// fresh SQLite file, record signed and unsigned decisions for a while (so the verifier thread
// and the WAL checkpoint thread both work), read them back, verify the export with
// `ledger verify`, stop with SIGTERM, and check that the process exited 0 without aborting.
//
//   node scripts/smoke.mjs [--seconds 60] [--database sqlite:/tmp/x.db | postgres://...]
//
// Prints one line per step and exits non-zero on the first failure. Uses nothing but Node and
// the repository (Ed25519 signing through node:crypto, the payload from examples/).
import { spawn, spawnSync } from 'node:child_process';
import { generateKeyPairSync, randomUUID, sign } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { decisionPayload } from '../examples/canon-payload.mjs';
import { build } from './build.mjs';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '60' }, database: { type: 'string' } } });
const seconds = Number(args.seconds);
if (!(seconds > 0)) fail(`--seconds must be a positive number, not ${args.seconds}`);

if (!build()) fail('the build (npm run build) failed');

const scratch = mkdtempSync(join(tmpdir(), 'ledger-smoke-'));
const databaseUrl = args.database ?? `sqlite:${join(scratch, 'ledger.db')}`;
const env = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEDGER_DATABASE_URL: databaseUrl, LEDGER_WRITE_LIMIT_PER_MIN: '1000000' };
const handle = `smoke-${process.pid}-${Date.now().toString(36)}`;

function step(text) {
  console.log(`smoke (node ${process.versions.node}): ${text}`);
}

function fail(text) {
  console.error(`smoke (node ${process.versions.node}): FAILED: ${text}`);
  process.exit(1);
}

function ledger(...argv) {
  const run = spawnSync(process.execPath, ['bin/ledger.js', ...argv], { cwd: ROOT, env, encoding: 'utf8' });
  if (run.status !== 0) fail(`ledger ${argv.join(' ')} exited ${run.status} (${run.signal ?? 'no signal'}): ${run.stderr}`);
  return run.stdout;
}

function startServer() {
  const child = spawn(process.execPath, ['bin/ledger.js', 'serve'], {
    cwd: ROOT, env: { ...env, PORT: '0', HOST: '127.0.0.1', LEDGER_LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'],
  });
  // Request logs run to megabytes in a minute: keep the tail, the address, and any abort.
  let tail = '';
  let url = null;
  let aborted = false;
  const collect = (chunk) => {
    const text = chunk.toString();
    tail = (tail + text).slice(-16_384);
    url ??= /listening at (http:\/\/127\.0\.0\.1:\d+)/i.exec(tail)?.[1] ?? null;
    aborted ||= /Assertion failed|Aborted|core dumped/i.test(text);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  return { child, exited, url: () => url, aborted: () => aborted, output: () => tail };
}

async function waitForUrl(server) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (server.url()) return server.url();
    await new Promise((r) => setTimeout(r, 50));
  }
  fail(`the server did not start: ${server.output()}`);
}

async function call(base, apiKey, method, path, body, headers = {}) {
  const response = await fetch(`${base}/v1${path}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, ...(body ? { 'content-type': 'application/json' } : {}), ...headers },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await response.json();
  return { status: response.status, json };
}

function signer() {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'der', type: 'spki' }).subarray(-32);
  return { publicKey: raw.toString('base64url'), sign: (text) => sign(null, Buffer.from(text, 'utf8'), privateKey).toString('base64url') };
}

async function recordFor(base, apiKey, key, until) {
  let recorded = 0;
  let signed = 0;
  for (let i = 0; Date.now() < until; i++) {
    const fields = { symbol: 'AAPL', action: i % 2 ? 'SELL' : 'BUY', quantity: String(1 + (i % 7)), thesis: `smoke decision ${i}` };
    const body = { ...fields };
    if (key && i % 2 === 0) {
      const nonce = randomUUID();
      body.signature = { key_id: key.id, nonce, signature: key.sign(decisionPayload({ agent: handle, fields, nonce })) };
    }
    const { status, json } = await call(base, apiKey, 'POST', '/decisions', body, { 'idempotency-key': randomUUID() });
    if (status !== 201) fail(`POST /v1/decisions answered ${status}: ${JSON.stringify(json)}`);
    if (body.signature && json.verification.agent_signed !== true) fail(`a signed decision came back agent_signed=${json.verification.agent_signed}`);
    recorded++;
    if (body.signature) signed++;
  }
  return { recorded, signed };
}

const created = JSON.parse(ledger('agents', 'create', handle, '--json'));
const apiKey = created.api_key?.secret;
if (!apiKey) fail('`ledger agents create --json` printed no api_key.secret');
step(`created agent ${handle} on ${databaseUrl.startsWith('sqlite:') ? 'SQLite' : 'PostgreSQL'}`);

const server = startServer();
const base = await waitForUrl(server);
step(`serving at ${base}`);

const pair = signer();
const registered = await call(base, apiKey, 'POST', '/keys', { public_key: pair.publicKey, label: 'smoke' });
if (registered.status !== 201) fail(`POST /v1/keys answered ${registered.status}: ${JSON.stringify(registered.json)}`);
const key = { id: registered.json.id, sign: pair.sign };

const until = Date.now() + seconds * 1000;
const writers = await Promise.all(Array.from({ length: 8 }, () => recordFor(base, apiKey, key, until)));
const recorded = writers.reduce((n, w) => n + w.recorded, 0);
const signed = writers.reduce((n, w) => n + w.signed, 0);
step(`recorded ${recorded} decisions (${signed} signed) in ${seconds} s`);

const profile = await fetch(`${base}/v1/agents/${handle}`).then((r) => r.json());
if (profile.counts?.records !== recorded || profile.counts?.signed !== signed) {
  fail(`the profile counts ${JSON.stringify(profile.counts)}, not ${recorded} records (${signed} signed)`);
}
step(`profile read back: ${recorded} records, ${signed} signed`);

const verify = spawnSync(process.execPath, ['bin/ledger.js', 'verify', `${base}/v1/export?agent=${handle}`], { cwd: ROOT, env, encoding: 'utf8' });
if (verify.status !== 0) fail(`ledger verify exited ${verify.status}: ${verify.stdout}${verify.stderr}`);
const verified = /(\d+) records?/.exec(verify.stdout);
step(`ledger verify passed${verified ? ` (${verified[0]})` : ''}`);

server.child.kill('SIGTERM');
const { code, signal } = await server.exited;
if (code !== 0) fail(`the server exited with code ${code}, signal ${signal}:\n${server.output()}`);
if (server.aborted()) fail(`the server printed an abort:\n${server.output()}`);
step('SIGTERM: the server exited 0');

rmSync(scratch, { recursive: true, force: true });
step('passed');
