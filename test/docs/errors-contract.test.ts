// The README's error table as a contract: every row is a code of the service's error catalogue
// (src/domain/errors.ts) with that HTTP status, and every catalogued error has its row. The
// catalogue is the only place an error the service sends is built (a scan of src/ says so), and
// every "<status> `<code>`" the docs write elsewhere names a catalogued pair.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { test } from 'node:test';
import { errors } from '../../src/domain/errors.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');

/** `code status` for each error of the catalogue. */
const catalogue = [...new Set(Object.values(errors).map((make) => make('')).map((e) => `${e.code} ${e.status}`))].sort();
const cataloguedCodes = new Set(catalogue.map((pair) => pair.split(' ')[0]!));

/** `code status` for each code of each row of the README's `| status | code | when |` table. */
function documentedPairs(): string[] {
  const lines = readme.split('\n');
  const start = lines.findIndex((l) => /^\| status \| code \| when \|$/.test(l));
  assert.ok(start >= 0, 'README.md has the error table');
  const pairs: string[] = [];
  for (const line of lines.slice(start + 2)) {
    if (!line.startsWith('|')) break;
    const [status, codes] = line.split('|').slice(1, -1).map((c) => c.trim());
    assert.match(status!, /^\d{3}$/, line);
    const named = [...codes!.matchAll(/`([a-z_]+)`/g)].map((m) => m[1]!);
    assert.ok(named.length > 0, `a row names its code: ${line}`);
    for (const code of named) pairs.push(`${code} ${status}`);
  }
  return pairs;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    return e.isDirectory() ? sourceFiles(path) : e.name.endsWith('.ts') ? [path] : [];
  });
}

test('every row of the README\'s error table is a catalogued code with that status, and every catalogued code has its row', () => {
  const documented = documentedPairs();
  assert.equal(new Set(documented).size, documented.length, 'no code and status twice');
  assert.deepEqual([...documented].sort(), catalogue);
});

test('no error the service sends is built outside the catalogue', () => {
  // A code spelled beside an HTTP status or an error type is an error built by hand. The client and
  // the MCP server build the client's own errors (status 0), never an answer of the service.
  const handMade = /\bstatus: \d{3}, code: '[a-z_]+'|\btype: '[a-z]+_error', code: '[a-z_]+'/g;
  // `ledger demo`'s refusal is printed by the CLI; no route answers with it.
  const notSent = new Set(["src/cli/demo-agents.ts: status: 409, code: 'demo_exists'"]);
  const found: string[] = [];
  for (const file of sourceFiles(join(ROOT, 'src'))) {
    const name = relative(ROOT, file);
    if (/^src\/(client|mcp)\//.test(name) || name === 'src/domain/errors.ts') continue;
    for (const m of readFileSync(file, 'utf8').matchAll(handMade)) found.push(`${name}: ${m[0]}`);
  }
  assert.deepEqual(found.filter((f) => !notSent.has(f)), []);
});

test('every "<status> `<code>`" in the README and docs/ names a catalogued code with that status', () => {
  const docs = readdirSync(join(ROOT, 'docs')).filter((n) => n.endsWith('.md')).map((n) => `docs/${n}`);
  const wrong: string[] = [];
  let seen = 0;
  for (const name of ['README.md', ...docs]) {
    const text = readFileSync(join(ROOT, name), 'utf8');
    for (const m of text.matchAll(/\b([1-5]\d\d),? `([a-z_]+)`/g)) {
      const [, status, code] = m;
      if (!cataloguedCodes.has(code!)) continue; // a caveat or report code, not an error
      seen++;
      if (!catalogue.includes(`${code} ${status}`)) wrong.push(`${name}: ${m[0]}`);
    }
  }
  assert.ok(seen > 10, `the docs name errors by status and code (${seen} found)`);
  assert.deepEqual(wrong, []);
});
