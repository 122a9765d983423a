// The operator CLI against a temp SQLite database: `ledger agents create|list|pause|resume|retire`
// and `ledger api-keys create|list|revoke`, with --json output that parses; secrets shown once;
// failures are one line on stderr and a non-zero exit.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, test } from 'node:test';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { postDecision, testApp } from '../support/app.ts';
import { outputOf } from '../support/child-output.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ledger-cli-'));
const database = `sqlite:${join(dir, 'ledger.db')}`;

type Run = { code: number | null; stdout: string; stderr: string };

function ledger(...args: string[]): Promise<Run> {
  return outputOf(spawn(process.execPath, ['bin/ledger.js', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEDGER_DATABASE_URL: 'sqlite:/nonexistent-dir-never-used/x.db' },
    stdio: ['ignore', 'pipe', 'pipe'],
  }));
}

/** Runs a command with --database and --json; asserts success and parses its output. */
async function json<T = any>(...args: string[]): Promise<T> {
  const run = await ledger(...args, '--database', database, '--json');
  assert.equal(run.code, 0, run.stderr);
  return JSON.parse(run.stdout) as T;
}

async function fails(pattern: RegExp, ...args: string[]): Promise<void> {
  const run = await ledger(...args, '--database', database, '--json');
  assert.notEqual(run.code, 0);
  assert.equal(run.stdout, '');
  const lines = run.stderr.trimEnd().split('\n');
  assert.equal(lines.length, 1, run.stderr);
  assert.match(lines[0]!, pattern);
}

const secrets: string[] = [];
const outputs: string[] = [];
let store: LedgerStore;

before(async () => {
  store = openStore(database);
  await store.migrate();
});
after(async () => {
  await store.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ledger agents / api-keys', { concurrency: true }, () => {
  test('agents create, list, pause, resume, retire (final)', async () => {
    const created = await json('agents', 'create', 'cli-alpha', '--display-name', 'Alpha', '--demo');
    assert.equal(created.agent.handle, 'cli-alpha');
    assert.equal(created.agent.display_name, 'Alpha');
    assert.equal(created.agent.status, 'active');
    assert.equal(created.agent.demo, true);
    assert.match(created.api_key.secret, /^dl_live_/);
    assert.deepEqual([...created.api_key.scopes].sort(), ['brokers:read', 'brokers:write', 'decisions:read', 'decisions:write', 'keys:write', 'webhooks:read', 'webhooks:write']);
    secrets.push(created.api_key.secret);
    const t = await testApp(store);
    try {
      assert.equal((await postDecision(t, created.api_key.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 201, 'the printed key records');
    } finally {
      await t.close();
    }

    const list = await json<{ handle: string; status: string; secret?: string }[]>('agents', 'list');
    assert.ok(list.some((a) => a.handle === 'cli-alpha' && a.status === 'active'));
    outputs.push(JSON.stringify(list));

    assert.equal((await json('agents', 'pause', 'cli-alpha')).status, 'paused');
    assert.equal((await store.findAgentByHandle('cli-alpha'))!.status, 'paused');
    assert.equal((await json('agents', 'resume', 'cli-alpha')).status, 'active');
    assert.equal((await json('agents', 'retire', 'cli-alpha')).status, 'retired');
    await fails(/retire/, 'agents', 'resume', 'cli-alpha');
    assert.equal((await store.findAgentByHandle('cli-alpha'))!.status, 'retired');
  });

  test('agents create without --json prints the secret once, readably; --scopes limits the key', async () => {
    const run = await ledger('agents', 'create', 'cli-text', '--scopes', 'decisions:read', '--database', database);
    assert.equal(run.code, 0, run.stderr);
    const secret = /secret \(shown once\): (dl_live_\S+)/.exec(run.stdout)?.[1];
    assert.ok(secret, run.stdout);
    secrets.push(secret);
    const holder = (await store.listApiKeys((await store.findAgentByHandle('cli-text'))!.id))[0]!;
    assert.deepEqual(holder.scopes, ['decisions:read']);
  });

  test('failures: a taken handle, a bad handle; one line on stderr, nothing created', async () => {
    assert.ok((await new Operators(store, systemClock).createAgent({ handle: 'cli-taken' })).ok);
    await Promise.all([
      fails(/already exists/, 'agents', 'create', 'cli-taken'),
      fails(/handle/, 'agents', 'create', 'No'),
    ]);
    assert.equal(await store.findAgentByHandle('No'), null);
  });

  test('api-keys create, list (prefix only) and revoke', async () => {
    const owner = await new Operators(store, systemClock).createAgent({ handle: 'cli-keys' });
    assert.ok(owner.ok);
    const issued = await json('api-keys', 'create', 'cli-keys', '--scopes', 'decisions:write,decisions:read');
    assert.equal(issued.agent, 'cli-keys');
    assert.deepEqual(issued.scopes, ['decisions:write', 'decisions:read']);
    assert.match(issued.secret, /^dl_live_/);
    secrets.push(issued.secret);

    const mine = await json<{ id: string; agent: string; prefix: string; secret?: string; revoked_at: string | null }[]>('api-keys', 'list', '--agent', 'cli-keys');
    outputs.push(JSON.stringify(mine));
    assert.deepEqual(mine.map((k) => k.id).sort(), [owner.value.apiKey.id, issued.id].sort());
    assert.ok(mine.every((k) => k.agent === 'cli-keys' && k.secret === undefined));
    const listed = mine.find((k) => k.id === issued.id)!;
    assert.equal(listed.prefix, issued.secret.slice(0, listed.prefix.length));
    assert.ok(listed.prefix.length < issued.secret.length - 16);

    const revoked = await json('api-keys', 'revoke', issued.id);
    assert.equal(revoked.id, issued.id);
    assert.ok(revoked.revoked_at);
    assert.equal(revoked.secret, undefined);
    outputs.push(JSON.stringify(revoked));
    assert.equal((await store.findApiKey(issued.id))!.revokedAt, revoked.revoked_at);

    const t = await testApp(store);
    try {
      assert.equal((await postDecision(t, issued.secret, { symbol: 'AAPL', action: 'BUY' })).statusCode, 401, 'a revoked key is refused');
    } finally {
      await t.close();
    }
  });
});

test('secrets appear in no later output', () => {
  assert.equal(secrets.length, 3);
  for (const s of secrets) for (const o of outputs) assert.ok(!o.includes(s));
});
