// The site wing's API reference page, {site_url}/docs/api: the service's own OpenAPI document
// rendered in the reader's browser by Redoc (its standalone bundle, from this package's
// node_modules, served by the service itself: no CDN, so a self-hosted page works offline).
// Owns the page and its assets: each compressed once, on first use, and then served from memory.
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';
import { brotliCompress, constants as zlib, gzip } from 'node:zlib';
import { sha256Hex } from '../core/sha256.ts';

const require = createRequire(import.meta.url);

/** Where the page is, and its assets under it (relative links, so a path prefix in front keeps working). */
export const API_REFERENCE_PATH = '/docs/api';
export const ASSET_PREFIX = '/docs/api/';

/**
 * The one address outside the service that Redoc's bundle loads: the Redocly logo beside "API docs
 * by Redocly" in the sidebar. It is pointed at a blank image served here, by a URL of the same
 * length (so the bundle's source map stays exact); the attribution text and link stay.
 */
export const REDOC_LOGO = 'https://cdn.redoc.ly/redoc/logo-mini.svg';
export const LOCAL_LOGO = sameLength('api/redoc-logo.svg', REDOC_LOGO.length);

function sameLength(path: string, length: number): string {
  return `${path}?${'_'.repeat(length - path.length - 1)}`;
}

const BLANK_SVG = '<svg xmlns="http://www.w3.org/2000/svg" width="1" height="1"/>';

type AssetSpec = { read: () => Promise<Buffer>; type: string };

/** The assets the page may load, by the name in their URL: nothing else under the prefix is served. */
const ASSETS: Record<string, AssetSpec> = {
  'redoc.standalone.js': { read: () => readRedocBundle(), type: 'text/javascript; charset=utf-8' },
  'redoc.standalone.js.map': { read: () => readFile(redocFile('redoc.standalone.js.map')), type: 'application/json; charset=utf-8' },
  'redoc-logo.svg': { read: async () => Buffer.from(BLANK_SVG), type: 'image/svg+xml; charset=utf-8' },
};

async function readRedocBundle(): Promise<Buffer> {
  const text = await readFile(redocFile('redoc.standalone.js'), 'utf8');
  return Buffer.from(text.replaceAll(`"${REDOC_LOGO}"`, `"${LOCAL_LOGO}"`));
}

function redocFile(name: string): string {
  return join(dirname(require.resolve('redoc/package.json')), 'bundles', name);
}

export function redocVersion(): string {
  return (require('redoc/package.json') as { version: string }).version;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

/**
 * The page. `openapiUrl` is the document's address, best relative to the page (`../v1/openapi.json`)
 * so that it is fetched from this very service. The script URL carries Redoc's version, so the
 * bundle can be cached for long.
 */
export function apiReferencePage(input: { siteUrl: string; title: string; openapiUrl: string }): string {
  const version = redocVersion();
  const canonical = `${input.siteUrl.replace(/\/+$/, '')}${API_REFERENCE_PATH}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>API reference · ${escapeHtml(input.title)}</title>
<link rel="canonical" href="${escapeHtml(canonical)}">
<link rel="alternate" type="application/json" href="${escapeHtml(input.openapiUrl)}" title="OpenAPI document">
<link rel="icon" href="data:,">
<style>body { margin: 0; } noscript p { font-family: sans-serif; padding: 1rem; }</style>
</head>
<body>
<noscript><p>The API reference is drawn by a script. Without it, read the <a href="${escapeHtml(input.openapiUrl)}">OpenAPI document</a> itself.</p></noscript>
<redoc spec-url="${escapeHtml(input.openapiUrl)}" path-in-middle-panel="true" expand-responses="200,201"></redoc>
<script src="api/redoc.standalone.js?v=${escapeHtml(version)}"></script>
</body>
</html>
`;
}

/**
 * The page's Content-Security-Policy: the site's, except that Redoc draws with styles it writes
 * into the page and searches in a worker it starts from a blob: URL. Still nothing from elsewhere,
 * and never inside another site's frame.
 */
export const API_REFERENCE_CSP = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; worker-src 'self' blob:; connect-src 'self'; object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

export type Asset = { type: string; etag: string; identity: Buffer; gzip: Buffer; br: Buffer };

const gzipAsync = promisify(gzip);
const brotliAsync = promisify(brotliCompress);

/** Loads, hashes and compresses the assets once (on the thread pool, not the event loop). */
export class ApiReferenceAssets {
  private readonly loaded = new Map<string, Promise<Asset>>();

  has(name: string): boolean {
    return Object.hasOwn(ASSETS, name);
  }

  /** The asset by name; undefined for a name the page does not use. */
  get(name: string): Promise<Asset> | undefined {
    const spec = ASSETS[name];
    if (!this.has(name) || spec === undefined) return undefined;
    let asset = this.loaded.get(name);
    if (!asset) {
      asset = load(spec);
      asset.catch(() => this.loaded.delete(name)); // a failed read is tried again next time
      this.loaded.set(name, asset);
    }
    return asset;
  }
}

async function load({ read, type }: AssetSpec): Promise<Asset> {
  return compressOnce(await read(), type);
}

/** A body of `type` with its ETag and its gzip and br variants, compressed on the thread pool. */
export async function compressOnce(identity: Buffer, type: string): Promise<Asset> {
  const [gz, br] = await Promise.all([
    gzipAsync(identity, { level: 9 }),
    brotliAsync(identity, { params: { [zlib.BROTLI_PARAM_QUALITY]: 9, [zlib.BROTLI_PARAM_SIZE_HINT]: identity.length } }),
  ]);
  return { type, etag: `"${sha256Hex(identity).slice(0, 32)}"`, identity, gzip: gz, br };
}

/** The best encoding the client accepts: br, then gzip, else none. */
export function pickEncoding(acceptEncoding: string | undefined): 'br' | 'gzip' | 'identity' {
  const accepted = new Map<string, number>();
  for (const part of (acceptEncoding ?? '').split(',')) {
    const [name, ...params] = part.trim().toLowerCase().split(';');
    const q = params.map((p) => /^\s*q=([0-9.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    if (name) accepted.set(name, q === undefined ? 1 : Number(q));
  }
  const ok = (name: string) => (accepted.get(name) ?? (accepted.get('*') ?? 0)) > 0;
  if (ok('br')) return 'br';
  if (ok('gzip')) return 'gzip';
  return 'identity';
}
