// The layer rules of docs (DESIGN: "Layers"), checked by `npm run lint:deps` and first thing in
// `npm test`. Imports go downward only:
//
//   bin -> cli -> server -> compose -> api -> ledger -> store -> domain -> core
//
// The read threads (src/read-threads.ts, src/read-thread.ts) are the server's: each composes and
// builds the app on a thread of its own.
//
// The wings (src/log, src/anchor, ...) sit between api and ledger: they may use ledger, store and
// core, and api, server and cli may use them. src/config.ts and src/runtime/ are plumbing any
// layer may use; they import nothing of the project. src/index.ts is the package's entry, on
// top. Type-only imports count (tsPreCompilationDeps), so a type cannot smuggle a cycle in.
//
// Between the wings, fences: a wing imports another wing only where WING_IMPORTS below allows it,
// with the reason; the published client, the MCP server and the page scripts import only what
// they may ship; the presentation (src/api, src/site) never reaches the store. The test
// test/architecture/fences.test.ts adds forbidden imports to a copy of src/ and expects this to fail.
//

const WING_DIRS = ['log', 'witness', 'anchor', 'brokers', 'market', 'performance', 'site', 'client', 'mcp', 'verify', 'webhooks', 'directory', 'vault'];
const WINGS = `^src/(${WING_DIRS.join('|')})/`;
const PROJECT = '^(src|bin|test|sim|bench|scripts|examples)/';
const NPM = ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];

/**
 * Every import from one wing into another: [from, to, why]. `from` is a wing (site/browser, the
 * page scripts, counts as a wing of its own); `to` is a wing, or the modules of a wing (a path
 * pattern under src/) when only those may be used. A pair not listed here fails.
 */
const WING_IMPORTS = [
  ['client', 'verify/',
    'The published client verifies what it reads with the verifier\'s pure checks (documents, proof, records, walk), in Node and in a browser.'],
  ['mcp', 'client/',
    'The MCP server is a client of the service: it reaches it through the published client package only.'],
  ['site/browser', 'verify/',
    '"Verify in this browser" runs the verifier\'s proof and record checks in the page.'],
  ['anchor', 'verify/bitcoin-headers\\.ts$',
    'The anchoring job checks a stamp\'s confirmation against block headers read by the same header source the offline verifier uses.'],
  ['anchor', 'log/port\\.ts$',
    'The anchoring job stamps the log\'s latest checkpoint, and a record\'s anchor is found by its log index: read through the log wing\'s storage port.'],
  ['site', 'log/reads\\.ts$',
    'The pages show the log\'s state and a record\'s inclusion as /v1/log and /v1/proof do, from the same use case.'],
  ['site', 'anchor/reads\\.ts$',
    'The pages show the anchors and a record\'s anchor as /v1/anchors and /v1/proof do, from the same use case.'],
  ['site', 'market/observations\\.ts$',
    'A record\'s page shows the price observed at it, as /v1/proof does, from the same use case.'],
  ['site', 'directory/service\\.ts$',
    'The leaderboard page is GET /v1/agents as a page: the directory\'s use case.'],
  ['site', 'performance/(views|outcome-pages)\\.ts$',
    'The agent page and the return badge show the stored performance reports and outcomes as the JSON reads render them.'],
  ['site', 'brokers/links\\.ts$',
    'The timeline and the verified badge show the executions the broker import linked to decisions.'],
  ['directory', 'performance/',
    'The leaderboard ranks agents by the metrics of their stored performance reports and lists them as the performance wing\'s CSV.'],
  ['performance', 'market/',
    'Portfolios are valued at the market wing\'s closes, read through its storage port; the synthetic benchmark uses its synthetic provider.'],
  ['performance', 'brokers/port\\.ts$',
    'The broker portfolio is valued from the fills and account activities the broker import stored, read through the broker wing\'s storage port.'],
  ['webhooks', 'vault/vault\\.ts$',
    'An endpoint\'s signing secret is stored sealed by the vault, under the associated data the vault gives webhook endpoints, and opened to sign each delivery.'],
  ['brokers', 'vault/vault\\.ts$',
    'Broker credentials and SnapTrade user secrets are stored sealed by the vault, under the associated data the vault gives their holders.'],
];

/** One rule per wing (and per site/browser): it imports no other wing but those WING_IMPORTS lists for it. */
const wingFences = () => [...WING_DIRS, 'site/browser'].map((wing) => {
  const allowed = WING_IMPORTS.filter(([from]) => from === wing).map(([, to]) => `^src/${to}`);
  return {
    name: `wing-imports-${wing.replace('/', '-')}`,
    severity: 'error',
    comment: `src/${wing}/ imports another wing only as WING_IMPORTS in .dependency-cruiser.cjs allows, with its reason.`,
    from: wing === 'site' ? { path: '^src/site/', pathNot: '^src/site/browser/' } : { path: `^src/${wing}/` },
    to: { path: WINGS, pathNot: [`^src/${wing}/`, ...allowed].join('|') },
  };
});

/**
 * A wing's storage port (src/<wing>/port.ts): the storage the wing needs, which the store
 * implements. The store imports these and nothing else of a wing.
 */
const WING_PORTS = '^src/(log|anchor|webhooks|site|directory|brokers|vault|market|performance)/port\.ts$';

/** `layer` (a path pattern) may not import any of `above`, except `allowed`. */
const downward = (name, layer, above, comment, allowed) => ({
  name,
  severity: 'error',
  comment,
  from: { path: layer },
  to: allowed ? { path: above, pathNot: allowed } : { path: above },
});

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'An import cycle: two modules that can only be understood (and loaded) together.',
      from: {},
      to: { circular: true },
    },
    {
      name: 'core-imports-only-core',
      severity: 'error',
      comment: 'src/core is pure: it imports nothing of the project outside src/core.',
      from: { path: '^src/core/' },
      to: { path: PROJECT, pathNot: '^src/core/' },
    },
    {
      name: 'core-has-no-packages',
      severity: 'error',
      comment: 'src/core has no dependencies: no npm package.',
      from: { path: '^src/core/' },
      to: { dependencyTypes: NPM },
    },
    {
      name: 'core-does-no-io',
      severity: 'error',
      comment: 'src/core does no I/O: of Node itself only its platform seams, sha256.ts and ed25519.ts, use node:crypto.',
      from: { path: '^src/core/', pathNot: '^src/core/(sha256|ed25519)\\.ts$' },
      to: { dependencyTypes: ['core'] },
    },
    {
      name: 'method-imports-only-method-and-core',
      severity: 'error',
      comment: 'src/method holds the published methods as pure code (the .ots codec and check, the performance method): it imports only method and core, so nothing of the service (no store, no job, no clock, no configuration) can reach them.',
      from: { path: '^src/method/' },
      to: { path: PROJECT, pathNot: '^src/(method|core)/' },
    },
    {
      name: 'method-does-no-io',
      severity: 'error',
      comment: 'src/method does no I/O: of Node itself it uses only node:crypto, for the hash functions the methods name.',
      from: { path: '^src/method/' },
      to: { dependencyTypes: ['core'], pathNot: '^crypto$' },
    },
    {
      name: 'src-not-test-sim-bench',
      severity: 'error',
      comment: 'The product never imports tests, simulators or benchmarks.',
      from: { path: '^src/' },
      to: { path: '^(test|sim|bench)/' },
    },
    {
      name: 'verifier-trusts-only-its-input',
      severity: 'error',
      comment: 'The offline verifier (src/verify) checks what it is given with the core and the published methods (src/method: the performance method to compute a report again, the .ots codec and check): none of the service. Of the plumbing it uses the bounded HTTP of runtime/.',
      from: { path: '^src/verify/' },
      to: { path: '^src/', pathNot: '^src/(verify|method|core|runtime)/' },
    },
    {
      name: 'verifier-runs-no-job',
      severity: 'error',
      comment: 'Nothing the offline verifier loads, however indirectly, runs a job or reaches the service: no job loop or job, no calendar client, no opened store, no use case.'
        + ' (A port\'s types, as the inputs bundle\'s, run nothing.)',
      from: { path: '^src/verify/' },
      to: {
        reachable: true,
        path: '^src/(runtime/job-loop|anchor/(job|calendar|service)|brokers/(sync|service)|directory/job|market/service|log/(service|integrator|witnessing)|store/open)\\.ts$'
          + '|^src/store/(sqlite|postgres)/|^src/(ledger|api|cli)/|^src/server\\.ts$',
      },
    },
    {
      name: 'server-composes-no-job',
      severity: 'error',
      comment: 'The server opens the store, composes (compose.ts makes every job and its order), listens and stops: it makes no job and no provider itself.',
      from: { path: '^src/server\\.ts$' },
      to: {
        path: '^src/(runtime/job-loop|anchor/(job|service)|brokers/(sync|service)|directory/job|market/(service|select)|log/(service|integrator|witnessing)|webhooks/(service|deliverer)|ledger/verifier-thread)\\.ts$',
      },
    },
    {
      name: 'client-ships-client-verify-core',
      severity: 'error',
      comment: 'src/client is the published browser package: it imports only itself, the verifier and the core.',
      from: { path: '^src/client/' },
      to: { path: '^src/', pathNot: '^src/(client|verify|core)/' },
    },
    {
      name: 'mcp-uses-only-client',
      severity: 'error',
      comment: 'src/mcp talks to the service as any client does: it imports only itself and the published client.',
      from: { path: '^src/mcp/' },
      to: { path: '^src/', pathNot: '^src/(mcp|client)/' },
    },
    {
      name: 'page-scripts-ship-verify-core',
      severity: 'error',
      comment: 'src/site/browser is bundled into the pages: it imports only itself, the verifier and the core.',
      from: { path: '^src/site/browser/' },
      to: { path: '^src/', pathNot: '^src/(site/browser|verify|core)/' },
    },
    {
      name: 'presentation-not-store',
      severity: 'error',
      comment: 'The HTTP edge and the pages (src/api, src/site) go through the use cases (src/ledger or a wing), never to the store; buildApp sees the store\'s health only (domain/store-health.ts).',
      from: { path: '^src/(api|site)/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'presentation-reads-log-and-anchors',
      severity: 'error',
      comment: 'The log, its witnessing and the anchors are written by jobs; the HTTP edge and the pages read them through their reads only, never the integrator, the tree, the keys or the jobs.',
      from: { path: '^src/(api|site)/' },
      to: { path: '^src/(log|anchor|witness)/', pathNot: '^src/(log/(reads|witness-reads)|anchor/reads)\\.ts$' },
    },
    ...wingFences(),
    {
      name: 'plumbing-imports-nothing',
      severity: 'error',
      comment: 'src/config.ts and src/runtime/ are used by every layer, so they import none.',
      from: { path: '^src/(config\\.ts$|runtime/)' },
      to: { path: PROJECT, pathNot: '^src/(config\\.ts$|runtime/)' },
    },
    downward('domain-below-store', '^src/domain/', '^src/(store|ledger|api/|(server|compose|read-threads?)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/domain (the types every layer speaks) imports only core.'),
    downward('store-below-ledger', '^src/store/', '^src/(ledger|api/|(server|compose|read-threads?)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/store imports only store, domain, core, plumbing and the storage ports the wings declare.', WING_PORTS),
    {
      name: 'wing-ports-speak-domain',
      severity: 'error',
      comment: 'A wing\'s storage port is what the store implements, so it names only domain, core and method types (the values a published method reads): nothing that could pull the wing (or the store) in.',
      from: { path: WING_PORTS },
      to: { path: PROJECT, pathNot: '^src/(domain|core|method)/' },
    },
    downward('ledger-below-api', '^src/ledger/', '^src/(api/|(server|compose|read-threads?)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/ledger (the use cases) imports only ledger, store, core and plumbing; not a wing.'),
    downward('wings-below-api', WINGS, '^src/(api/|(server|compose|read-threads?)\\.ts$|cli/|index\\.ts$)|^bin/',
      'A wing may use ledger, store and core, never api, server or cli.'),
    downward('api-below-server', '^src/api/', '^src/((server|compose|read-threads?)\\.ts$|cli/|index\\.ts$)|^bin/',
      'src/api may use wings, ledger, store and core, not the server or cli.'),
    downward('compose-below-server', '^src/compose\\.ts$', '^src/((server|read-threads?)\\.ts$|cli/|index\\.ts$)|^bin/',
      'src/compose.ts builds every part of a serving process once (over api and below); the server starts it.'),
    downward('server-below-cli', '^src/(server|read-threads?)\\.ts$', '^src/(cli|index\\.ts$)|^bin/',
      'src/server.ts starts what src/compose.ts builds; the cli starts it.'),
    downward('cli-below-bin', '^src/cli/', '^src/index\\.ts$|^bin/',
      'src/cli may use everything in src but the package entry.'),
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // bin/ledger.js runs the compiled dist/, which mirrors src/.
    exclude: { path: '^dist/' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: {
      exportsFields: ['exports'],
      conditionNames: ['import', 'require', 'node', 'default', 'types'],
      mainFields: ['module', 'main', 'types', 'typings'],
    },
    skipAnalysisNotInRules: true,
  },
};
