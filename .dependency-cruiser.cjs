// The layer rules of docs (DESIGN: "Layers"), checked by `npm run lint:deps` and first thing in
// `npm test`. Imports go downward only:
//
//   bin -> cli -> server -> compose -> api -> ledger -> store -> domain -> core
//
// The wings (src/log, src/anchor, ...) sit between api and ledger: they may use ledger, store and
// core, and api, server and cli may use them. src/config.ts and src/runtime/ are plumbing any
// layer may use; they import nothing of the project. src/index.ts is the package's entry, on
// top. Type-only imports count (tsPreCompilationDeps), so a type cannot smuggle a cycle in.
//

const WINGS = '^src/(log|witness|anchor|brokers|market|performance|site|client|mcp|verify|webhooks|directory)/';
const PROJECT = '^(src|bin|test|sim|bench|scripts|examples)/';
const NPM = ['npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-bundled', 'npm-no-pkg', 'npm-unknown'];

/**
 * A wing's storage port (src/<wing>/port.ts): the storage the wing needs, which the store
 * implements. The store imports these and nothing else of a wing.
 */
const WING_PORTS = '^src/(webhooks|site|directory|brokers)/port\\.ts$';

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
      name: 'src-not-test-sim-bench',
      severity: 'error',
      comment: 'The product never imports tests, simulators or benchmarks.',
      from: { path: '^src/' },
      to: { path: '^(test|sim|bench)/' },
    },
    {
      name: 'verifier-trusts-only-its-input',
      severity: 'error',
      comment: 'The offline verifier (src/verify) checks published records with the core alone: none of the service. To compute a performance report again it uses the pure accounting of the documented method (no I/O, no job): the engine and the modules it is made of.',
      from: { path: '^src/verify/' },
      to: { path: '^src/', pathNot: '^src/(verify|core|runtime)/|^src/performance/(engine|actions|numbers|exact|outcomes|perf|metrics|portfolio|inputs|bundle|broker-history)\\.ts$' },
    },
    {
      name: 'routes-not-store',
      severity: 'error',
      comment: 'Routes go through the use cases (src/ledger or a wing), never to the store.',
      from: { path: '^src/api/routes/' },
      to: { path: '^src/store/' },
    },
    {
      name: 'plumbing-imports-nothing',
      severity: 'error',
      comment: 'src/config.ts and src/runtime/ are used by every layer, so they import none.',
      from: { path: '^src/(config\\.ts$|runtime/)' },
      to: { path: PROJECT, pathNot: '^src/(config\\.ts$|runtime/)' },
    },
    downward('domain-below-store', '^src/domain/', '^src/(store|ledger|api/|(server|compose)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/domain (the types every layer speaks) imports only core.'),
    downward('store-below-ledger', '^src/store/', '^src/(ledger|api/|(server|compose)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/store imports only store, domain, core, plumbing and the storage ports the wings declare.', WING_PORTS),
    {
      name: 'wing-ports-speak-domain',
      severity: 'error',
      comment: 'A wing\'s storage port is what the store implements, so it names only domain and core types: nothing that could pull the wing (or the store) in.',
      from: { path: WING_PORTS },
      to: { path: PROJECT, pathNot: '^src/(domain|core)/' },
    },
    downward('ledger-below-api', '^src/ledger/', '^src/(api/|(server|compose)\\.ts$|cli/|index\\.ts$)|' + WINGS + '|^bin/',
      'src/ledger (the use cases) imports only ledger, store, core and plumbing; not a wing.'),
    downward('wings-below-api', WINGS, '^src/(api/|(server|compose)\\.ts$|cli/|index\\.ts$)|^bin/',
      'A wing may use ledger, store and core, never api, server or cli.'),
    downward('api-below-server', '^src/api/', '^src/((server|compose)\\.ts$|cli/|index\\.ts$)|^bin/',
      'src/api may use wings, ledger, store and core, not the server or cli.'),
    downward('compose-below-server', '^src/compose\\.ts$', '^src/(server\\.ts$|cli/|index\\.ts$)|^bin/',
      'src/compose.ts builds every part of a serving process once (over api and below); the server starts it.'),
    downward('server-below-cli', '^src/server\\.ts$', '^src/(cli|index\\.ts$)|^bin/',
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
