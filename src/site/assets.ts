// The site's static assets, served by the service itself (no third-party CDN: a self-hoster's
// pages work offline): the stylesheet and the browser scripts that scripts/build.mjs writes into
// dist/site/assets/, and uPlot from node_modules. Read once at start; each is addressed with a
// content hash (`/assets/<name>?v=<hash>`) so it can be cached for a year.
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';

export type Asset = { name: string; bytes: Buffer; type: string; version: string };

/** Built by scripts/build.mjs: the same folder whether this module runs from src/ (tsx) or dist/. */
const BUILT = new URL('../../dist/site/assets/', import.meta.url);

const TYPES: Record<string, string> = { css: 'text/css; charset=utf-8', js: 'text/javascript; charset=utf-8', svg: 'image/svg+xml' };

/** Asset name -> where it is read from. */
function sources(): Record<string, string> {
  const require = createRequire(import.meta.url);
  return {
    'site.css': fileURLToPath(new URL('site.css', BUILT)),
    'favicon.svg': fileURLToPath(new URL('favicon.svg', BUILT)),
    'verify.js': fileURLToPath(new URL('verify.js', BUILT)),
    'agent.js': fileURLToPath(new URL('agent.js', BUILT)),
    'home.js': fileURLToPath(new URL('home.js', BUILT)),
    'uplot.js': require.resolve('uplot/dist/uPlot.iife.min.js'),
    'uplot.css': require.resolve('uplot/dist/uPlot.min.css'),
  };
}

export class Assets {
  private readonly byName = new Map<string, Asset>();
  /** Assets that could not be read (a checkout without `npm run build`): pages leave them out. */
  readonly missing: string[] = [];

  constructor() {
    for (const [name, path] of Object.entries(sources())) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(path);
      } catch {
        this.missing.push(name);
        continue;
      }
      const version = createHash('sha256').update(bytes).digest('hex').slice(0, 12);
      this.byName.set(name, { name, bytes, type: TYPES[name.split('.').pop()!] ?? 'application/octet-stream', version });
    }
  }

  get(name: string): Asset | null {
    return this.byName.get(name) ?? null;
  }

  /** The address of an asset, or null when it is missing. */
  url(name: string): string | null {
    const a = this.byName.get(name);
    return a ? `/assets/${a.name}?v=${a.version}` : null;
  }
}
