// The fences between the wings (.dependency-cruiser.cjs) catch what they are for: each forbidden
// import below, added as one line to a scratch copy of src/, makes the check fail with its rule
// naming that import; the copy as it is passes. Only the changed file and what it imports are
// cruised (the whole tree is cruised first thing in `npm test`).
import assert from 'node:assert/strict';
import { cpSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, test } from 'node:test';
import { cruise, type ICruiseOptions, type ICruiseResult } from 'dependency-cruiser';
import extractDepcruiseOptions from 'dependency-cruiser/config-utl/extract-depcruise-options';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

type Forbidden = { what: string; file: string; imports: string; rule: string };

/** `imports` is the module the added line imports, as a path from the root; `rule` the rule that must refuse it. */
const FORBIDDEN: Forbidden[] = [
  { what: 'the SQLite store from the published client', file: 'src/client/index.ts', imports: 'src/store/sqlite/store.ts', rule: 'client-ships-client-verify-core' },
  { what: 'the SQLite store from the MCP server', file: 'src/mcp/index.ts', imports: 'src/store/sqlite/store.ts', rule: 'mcp-uses-only-client' },
  { what: 'the SQLite store from a page script', file: 'src/site/browser/verify.ts', imports: 'src/store/sqlite/store.ts', rule: 'page-scripts-ship-verify-core' },
  { what: 'the log integrator from a route', file: 'src/api/routes/health.ts', imports: 'src/log/integrator.ts', rule: 'presentation-reads-log-and-anchors' },
  { what: 'the site from the market wing', file: 'src/market/service.ts', imports: 'src/site/site.ts', rule: 'wing-imports-market' },
  { what: 'the anchoring job from the offline anchor check', file: 'src/verify/anchor.ts', imports: 'src/anchor/job.ts', rule: 'verifier-trusts-only-its-input' },
  { what: 'the store from a page of the site', file: 'src/site/pages/record.ts', imports: 'src/store/port.ts', rule: 'presentation-not-store' },
  { what: 'the log integrator from the server', file: 'src/server.ts', imports: 'src/log/service.ts', rule: 'server-composes-no-job' },
  { what: 'the store from the performance method', file: 'src/method/perf/engine.ts', imports: 'src/store/port.ts', rule: 'method-imports-only-method-and-core' },
  { what: 'the performance service from the performance method', file: 'src/method/perf/engine.ts', imports: 'src/performance/service.ts', rule: 'method-imports-only-method-and-core' },
  { what: 'the HTTP app from the .ots codec', file: 'src/method/ots/codec.ts', imports: 'src/api/app.ts', rule: 'method-imports-only-method-and-core' },
  { what: 'the configuration from the performance method', file: 'src/method/perf/portfolio.ts', imports: 'src/config.ts', rule: 'method-imports-only-method-and-core' },
  { what: 'the performance service from the offline verifier', file: 'src/verify/performance.ts', imports: 'src/performance/service.ts', rule: 'verifier-trusts-only-its-input' },
  { what: 'the market-data choice from the server', file: 'src/server.ts', imports: 'src/market/select.ts', rule: 'server-composes-no-job' },
];

let scratch: string;
let options: ICruiseOptions;

before(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'ledger-fences-'));
  options = await extractDepcruiseOptions(join(ROOT, '.dependency-cruiser.cjs'));
});

after(() => rmSync(scratch, { recursive: true, force: true }));

/** A copy of the rules' input (src/, the tsconfig, the package's manifest and its node_modules) under `name`. */
function copyOfTree(name: string): string {
  const dir = join(scratch, name);
  cpSync(join(ROOT, 'src'), join(dir, 'src'), { recursive: true });
  for (const file of ['tsconfig.json', 'package.json']) cpSync(join(ROOT, file), join(dir, file));
  symlinkSync(join(ROOT, 'node_modules'), join(dir, 'node_modules'), 'dir');
  return dir;
}

/** Adds `import '<module>';` as the first line of `file`. */
function addImport(dir: string, file: string, module: string): void {
  const depth = file.split('/').length - 1;
  const specifier = `${'../'.repeat(depth)}${module}`;
  const path = join(dir, file);
  writeFileSync(path, `import '${specifier}';\n${readFileSync(path, 'utf8')}`);
}

/** The rules' violations when `files` (and what they import) are cruised in `dir`. */
async function violations(dir: string, files: string[]): Promise<ICruiseResult['summary']['violations']> {
  // Each copy has its own absolute paths, so nothing parsed in one copy is reused in another.
  const result = await cruise(files, { ...options, baseDir: dir, outputType: 'json' }, {}, { tsConfig: extractTSConfig(join(dir, 'tsconfig.json')) });
  return (JSON.parse(result.output as string) as ICruiseResult).summary.violations;
}

test('the unchanged tree passes the fences', async () => {
  const found = await violations(copyOfTree('unchanged'), [...new Set(FORBIDDEN.map((f) => f.file))]);
  assert.deepEqual(found.map((v) => `${v.rule.name}: ${v.from} -> ${v.to}`), []);
});

for (const forbidden of FORBIDDEN) {
  test(`importing ${forbidden.what} fails the fences`, async () => {
    const dir = copyOfTree(`${forbidden.rule}-${forbidden.file}-${forbidden.imports}`.replace(/\W/g, '_'));
    addImport(dir, forbidden.file, forbidden.imports);
    const found = await violations(dir, [forbidden.file]);
    const named = found.filter((v) => v.from === forbidden.file && v.to === forbidden.imports).map((v) => v.rule.name);
    assert.ok(named.includes(forbidden.rule), `expected ${forbidden.rule} on ${forbidden.file} -> ${forbidden.imports}; found ${JSON.stringify(found.map((v) => [v.rule.name, v.from, v.to]))}`);
    assert.ok(found.every((v) => v.rule.severity === 'error'));
  });
}
