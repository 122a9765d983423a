// The README's configuration table states the defaults config.ts defines once: the benchmark
// symbol and the OpenTimestamps calendars, checked against the constants and what loadConfig makes
// of an environment without them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { DEFAULT_BENCHMARK, DEFAULT_OTS_CALENDARS, loadConfig } from '../../src/config.ts';

const readme = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');

/** The default column of the README's row for `name`. */
function defaultOf(name: string): string {
  const row = readme.split('\n').find((l) => l.startsWith(`| \`${name}\` |`));
  assert.ok(row, `README.md has a row for ${name}`);
  return row.split('|')[2]!.trim();
}

test('the README states the defaults loadConfig applies', () => {
  const config = loadConfig({});
  assert.equal(config.performance.benchmark, DEFAULT_BENCHMARK);
  assert.deepEqual(config.anchor.calendars, DEFAULT_OTS_CALENDARS);
  assert.equal(defaultOf('LEDGER_BENCHMARK'), `\`${DEFAULT_BENCHMARK}\``);
  const hosts = [...defaultOf('LEDGER_OTS_CALENDARS').matchAll(/`([a-z0-9.-]+)`/g)].map((m) => `https://${m[1]}`);
  assert.deepEqual(hosts, DEFAULT_OTS_CALENDARS);
});
