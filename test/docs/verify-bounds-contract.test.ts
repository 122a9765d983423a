// docs/operations.md "Verifying a server you do not trust" states the verifiers' bounds: the table's
// defaults are the ones both verifiers use (src/verify/bounds.ts and python/decision_ledger), and
// every option it names exists on both command lines.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEFAULT_BOUNDS, MAX_JSON_NESTING } from '../../src/verify/bounds.ts';
import { EXPORT_BLOCK_BYTES } from '../../src/verify/documents.ts';

const doc = readFileSync(new URL('../../docs/operations.md', import.meta.url), 'utf8');
const section = doc.slice(doc.indexOf('## Verifying a server you do not trust'), doc.indexOf('## Not covered yet'));
const PYTHON = process.env.LEDGER_TEST_PYTHON ?? '/usr/bin/python3';

/** The Default cell of the table's row whose option is `option`. */
function documentedDefault(option: string): string {
  const row = section.split('\n').find((l) => l.includes(`\`${option}`));
  assert.ok(row, `a row for ${option}`);
  return row.split('|')[2]!.trim();
}

test('the documented defaults are the verifiers\' own', () => {
  assert.equal(documentedDefault('--timeout'), `${DEFAULT_BOUNDS.timeoutMs / 1000} s`);
  assert.equal(documentedDefault('--idle-timeout'), `${DEFAULT_BOUNDS.idleMs / 1000} s`);
  assert.equal(documentedDefault('--max-bytes'), `${DEFAULT_BOUNDS.maxBytes / 1024 ** 3} GiB`);
  assert.equal(documentedDefault('--max-json-bytes'), `${DEFAULT_BOUNDS.maxJsonBytes / 1024 ** 2} MiB`);
  assert.match(section, new RegExp(`\\| JSON nesting \\| ${MAX_JSON_NESTING} levels \\|`));
  assert.match(section, new RegExp(`blocks of at most ${EXPORT_BLOCK_BYTES / 1024 ** 2} MiB`));
  const python = spawnSync(PYTHON, ['-c', [
    'from decision_ledger.sources import Bounds', 'from decision_ledger.verify import MAX_JSON_NESTING as n', 'b = Bounds()',
    'print(b.timeout, b.idle_timeout, b.max_bytes, b.max_json_bytes, n)',
  ].join('\n')], { cwd: fileURLToPath(new URL('../../python/', import.meta.url)), encoding: 'utf8' });
  assert.equal(python.status, 0, python.stderr);
  assert.equal(python.stdout.trim(), `${DEFAULT_BOUNDS.timeoutMs / 1000}.0 ${DEFAULT_BOUNDS.idleMs / 1000}.0 ${DEFAULT_BOUNDS.maxBytes} ${DEFAULT_BOUNDS.maxJsonBytes} ${MAX_JSON_NESTING}`);
});

test('every option of the table is on both command lines', () => {
  const node = spawnSync(process.execPath, ['--import', 'tsx', fileURLToPath(new URL('../../src/cli/main.ts', import.meta.url)), 'verify', '--help'], { encoding: 'utf8' });
  const python = spawnSync(PYTHON, ['-m', 'decision_ledger', 'verify', '--help'], { cwd: fileURLToPath(new URL('../../python/', import.meta.url)), encoding: 'utf8' });
  for (const option of ['--timeout', '--idle-timeout', '--max-bytes', '--max-json-bytes']) {
    assert.ok(node.stdout.includes(option), `ledger verify ${option}\n${node.stdout}${node.stderr}`);
    assert.ok(python.stdout.includes(option), `python verify ${option}\n${python.stdout}`);
  }
});
