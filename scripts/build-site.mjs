#!/usr/bin/env node
// The public site's browser assets (run by scripts/build.mjs after tsc): esbuild bundles the
// scripts of src/site/browser/ and the stylesheet into dist/site/assets/. The bundles run the
// same canon_v1 core as the server, with its two platform seams (src/core/sha256.ts and
// ed25519.ts, the only files of the core that use node:crypto) swapped for the browser's, the
// same the client's browser build uses (src/client/browser/, package.json `browser`). A bundle
// that reaches any other Node module fails the build (platform: browser).
import { copyFileSync, mkdirSync } from 'node:fs';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));
const OUT = resolve(ROOT, 'dist/site/assets');

/** The core's platform seams and their browser replacements. */
export const SEAMS = {
  [resolve(ROOT, 'src/core/sha256.ts')]: resolve(ROOT, 'src/client/browser/sha256.ts'),
  [resolve(ROOT, 'src/core/ed25519.ts')]: resolve(ROOT, 'src/client/browser/ed25519.ts'),
};

const browserSeams = {
  name: 'browser-seams',
  setup(build) {
    build.onResolve({ filter: /(sha256|ed25519)\.ts$/ }, (args) => {
      const target = SEAMS[resolve(args.resolveDir, args.path)];
      return target ? { path: target } : undefined;
    });
  },
};

export async function buildSite() {
  let esbuild;
  try {
    esbuild = await import('esbuild');
  } catch {
    console.error('build-site: esbuild is not installed (an install without dev dependencies?); keeping dist/site/assets as it is');
    return true;
  }
  mkdirSync(OUT, { recursive: true });
  const common = { bundle: true, minify: true, logLevel: 'warning', legalComments: 'none' };
  await esbuild.build({
    ...common,
    entryPoints: { verify: resolve(ROOT, 'src/site/browser/verify.ts'), agent: resolve(ROOT, 'src/site/browser/agent.ts'), home: resolve(ROOT, 'src/site/browser/home.ts') },
    outdir: OUT,
    platform: 'browser',
    format: 'iife',
    target: ['es2020', 'chrome100', 'firefox100', 'safari15'],
    plugins: [browserSeams],
  });
  await esbuild.build({ ...common, entryPoints: { site: resolve(ROOT, 'src/site/assets/site.css') }, outdir: OUT });
  copyFileSync(resolve(ROOT, 'src/site/assets/favicon.svg'), resolve(OUT, 'favicon.svg'));
  return true;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  buildSite().then((ok) => process.exit(ok ? 0 : 1), (e) => {
    console.error(`build-site: ${e.message}`);
    process.exit(1);
  });
}

