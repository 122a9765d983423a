// `ledger serve` with bad configuration stops at start: a non-zero exit and ONE clear line on
// stderr naming what is wrong, never a stack trace.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, test } from 'node:test';
import { outputOf, type ChildOutput } from '../support/child-output.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ledger-bad-config-'));
writeFileSync(join(dir, 'a-file'), 'not a directory');
after(() => rmSync(dir, { recursive: true, force: true }));

async function runLedger(args: string[], env: Record<string, string>): Promise<ChildOutput> {
  const child = spawn(process.execPath, ['bin/ledger.js', ...args], {
    cwd: ROOT,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '', LEDGER_DATABASE_URL: `sqlite:${join(dir, 'ok.db')}`, PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const timer = setTimeout(() => child.kill('SIGKILL'), 20_000);
  const output = await outputOf(child);
  clearTimeout(timer);
  return output;
}

const cases: { name: string; args?: string[]; env: Record<string, string>; names: RegExp }[] = [
  { name: 'PORT=abc', env: { PORT: 'abc' }, names: /PORT/ },
  { name: '--port abc', args: ['serve', '--port', 'abc'], env: {}, names: /PORT/ },
  { name: 'LEDGER_DATABASE_URL=mysql://x', env: { LEDGER_DATABASE_URL: 'mysql://x' }, names: /LEDGER_DATABASE_URL/ },
  { name: 'LEDGER_ADMIN_TOKEN too short', env: { LEDGER_ADMIN_TOKEN: 'short' }, names: /LEDGER_ADMIN_TOKEN/ },
  { name: 'LEDGER_WRITE_LIMIT_PER_MIN=0', env: { LEDGER_WRITE_LIMIT_PER_MIN: '0' }, names: /LEDGER_WRITE_LIMIT_PER_MIN/ },
  { name: 'LEDGER_REDIS_URL with http:', env: { LEDGER_REDIS_URL: 'http://127.0.0.1:6379' }, names: /LEDGER_REDIS_URL/ },
  { name: 'LEDGER_METRICS_PORT equal to PORT', env: { PORT: '18081', LEDGER_METRICS_PORT: '18081' }, names: /LEDGER_METRICS_PORT/ },
  { name: 'LEDGER_MARKET_DATA=bogus', env: { LEDGER_MARKET_DATA: 'bogus' }, names: /^ledger: configuration: LEDGER_MARKET_DATA must be one of alpaca, synthetic, none/ },
  { name: 'LEDGER_MARKET_DATA=alpaca without keys', env: { LEDGER_MARKET_DATA: 'alpaca' }, names: /LEDGER_ALPACA_DATA_KEY_ID and LEDGER_ALPACA_DATA_SECRET/ },
  { name: 'LEDGER_ALPACA_DATA_PLAN unknown', env: { LEDGER_ALPACA_DATA_KEY_ID: 'PK1', LEDGER_ALPACA_DATA_SECRET: 's3cret-pass', LEDGER_ALPACA_DATA_PLAN: 'gold' }, names: /LEDGER_ALPACA_DATA_PLAN/ },
  { name: 'an SQLite path that cannot be created', env: { LEDGER_DATABASE_URL: `sqlite:${join(dir, 'a-file', 'ledger.db')}` }, names: /database|ledger\.db/i },
  { name: 'an unreachable PostgreSQL', env: { LEDGER_DATABASE_URL: 'postgres://nobody:s3cret-pass@127.0.0.1:1/ledger' }, names: /database/i },
];

for (const c of cases) {
  test(`${c.name}: exits non-zero with one line on stderr and no stack trace`, async () => {
    const { code, stderr, stdout } = await runLedger(c.args ?? ['serve'], c.env);
    assert.notEqual(code, 0, `exit code ${code}`);
    assert.notEqual(code, null, 'exited by itself');
    const lines = stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, `one line on stderr, got:\n${stderr}`);
    assert.match(lines[0]!, c.names);
    assert.doesNotMatch(stderr + stdout, /^\s+at /m, 'no stack trace');
    assert.doesNotMatch(stderr + stdout, /s3cret-pass/, 'a database password is never printed');
  });
}
