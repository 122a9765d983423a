// What the site says about the service: {site_url}/llms.txt (interface endpoint 12) and
// /llms-full.txt, the docs as Markdown at /docs/<name>.md, the API reference page /docs/api
// with its assets, and the OpenAPI document /v1/openapi.json. Generated once, on first request,
// from the live OpenAPI document and the docs/ files (site/llms.ts, site/docs.ts), then served
// from memory with an ETag. The large ones (the OpenAPI document, llms-full.txt, the assets) are
// compressed once, to br and gzip, and sent as the client accepts them, never compressed per
// request. Under the read rate limit and the read gate like every public read.
import compress from '@fastify/compress';
import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { errors } from '../../domain/errors.ts';
import { API_REFERENCE_CSP, ApiReferenceAssets, apiReferencePage, compressOnce, pickEncoding, type Asset } from '../../site/api-reference.ts';
import { DOC_NAME, readDocs, type DocFile } from '../../site/docs.ts';
import { LlmsText, type OpenApi } from '../../site/llms.ts';
import { sendError } from '../errors.ts';
import { installReadLimits, notModified, type ReadLimits } from '../public-http.ts';
import { CHEAP_READ } from '../read-gate.ts';
import { markPage } from '../response-headers.ts';
import type { App } from '../types.ts';
import { PUBLIC_TAG, publicSecurity } from './public/options.ts';

export type LlmsRouteOptions = {
  siteUrl: string;
  baseUrl: string;
  /** The service's OpenAPI document, as GET /v1/openapi.json serves it. */
  openapi: () => object;
  /** Where the Markdown docs are read from (default: this package's docs/). */
  docsDir?: string;
} & ReadLimits;

/** The texts change only with a new release; a reader revalidates them after an hour. */
const TEXT_CACHE = 'public, max-age=3600';
/** The OpenAPI document changes only with a new release too; a client revalidates it after five minutes. */
const OPENAPI_CACHE = 'public, max-age=300';
/** The script's URL carries its version, so it is kept for a day. */
const ASSET_CACHE = 'public, max-age=86400';

const TEXT = 'text/plain; charset=utf-8';
const MARKDOWN = 'text/markdown; charset=utf-8';

type Built = { llms: string; full: Asset; openapi: Asset; docs: Map<string, DocFile>; page: string };

/** Sends a body compressed once, in the encoding the client takes best, with that variant's ETag (304 when it has it). */
function sendCompressed(request: FastifyRequest, reply: FastifyReply, asset: Asset, cacheControl: string): FastifyReply {
  const encoding = pickEncoding(request.headers['accept-encoding']);
  const tag = encoding === 'identity' ? asset.etag : `${asset.etag.slice(0, -1)}-${encoding}"`;
  reply.header('cache-control', cacheControl).header('vary', 'Accept-Encoding').header('etag', tag);
  if (notModified(request, tag)) return reply.code(304).send();
  if (encoding !== 'identity') reply.header('content-encoding', encoding);
  return reply.type(asset.type).send(encoding === 'identity' ? asset.identity : asset[encoding]);
}

export async function llmsAndDocsRoutes(app: App, options: LlmsRouteOptions): Promise<void> {
  installReadLimits(app, options);
  await app.register(etag, { weak: true });
  await app.register(compress, { global: true, threshold: 1024, encodings: ['br', 'gzip'], customTypes: /^text\// });
  let built: Promise<Built> | null = null;
  const texts = () => {
    if (built === null) {
      built = build(options);
      built.catch(() => (built = null)); // a failed build is tried again on the next request
    }
    return built;
  };
  const assets = new ApiReferenceAssets();
  const answer = (reply: FastifyReply, type: string, body: string) =>
    reply.header('cache-control', TEXT_CACHE).header('access-control-allow-origin', '*').type(type).send(body);

  app.get('/llms.txt', {
    schema: {
      operationId: 'getLlmsTxt',
      security: publicSecurity,
      summary: 'The service described for language models (llms.txt)',
      description: 'Markdown in the llmstxt.org layout: what the service is, how an agent records, signs and verifies a decision, every endpoint, and links to the docs as Markdown and to the OpenAPI document.',
      tags: PUBLIC_TAG,
      produces: ['text/plain'],
      response: { 200: Type.String({ description: 'Markdown (llmstxt.org).' }) },
    },
  }, async function getLlmsTxt(_request, reply) {
    return answer(reply, TEXT, (await texts()).llms);
  });

  app.get('/llms-full.txt', {
    schema: {
      operationId: 'getLlmsFullTxt',
      security: publicSecurity,
      summary: 'llms.txt with every doc inline',
      tags: PUBLIC_TAG,
      produces: ['text/plain'],
      response: { 200: Type.String({ description: 'Markdown.' }) },
    },
  }, async function getLlmsFullTxt(request, reply) {
    return sendCompressed(request, reply.header('access-control-allow-origin', '*'), (await texts()).full, TEXT_CACHE);
  });

  app.get('/v1/openapi.json', { schema: { hide: true } }, async function getOpenApi(request, reply) {
    return sendCompressed(request, reply.header('access-control-allow-origin', '*'), (await texts()).openapi, OPENAPI_CACHE);
  });

  app.get('/docs/:name.md', { schema: { hide: true } }, async function getDocMarkdown(request, reply) {
    const name = `${(request.params as { name: string }).name}.md`;
    const doc = DOC_NAME.test(name) ? (await texts()).docs.get(name) : undefined;
    if (!doc) return sendError(request, reply, errors.notFound(`no document ${name}`, 'name'));
    return answer(reply, MARKDOWN, doc.text);
  });

  app.get('/docs/api', { schema: { hide: true } }, async function getApiReference(_request, reply) {
    return answer(markPage(reply, API_REFERENCE_CSP), 'text/html; charset=utf-8', (await texts()).page);
  });

  app.get('/docs/api/:asset', { schema: { hide: true }, config: CHEAP_READ }, async function getApiReferenceAsset(request, reply) {
    const name = (request.params as { asset: string }).asset;
    const loading = assets.get(name);
    if (!loading) return sendError(request, reply, errors.notFound(`no asset ${name}`, 'asset'));
    return sendCompressed(request, reply, await loading, ASSET_CACHE);
  });
}

async function build(options: LlmsRouteOptions): Promise<Built> {
  const docs = await readDocs(options.docsDir);
  const openapi = options.openapi() as OpenApi;
  const llms = new LlmsText({ siteUrl: options.siteUrl, baseUrl: options.baseUrl, openapi, docs });
  const [full, document] = await Promise.all([
    compressOnce(Buffer.from(llms.fullText()), TEXT),
    compressOnce(Buffer.from(JSON.stringify(openapi)), 'application/json; charset=utf-8'),
  ]);
  return {
    llms: llms.text(),
    full,
    openapi: document,
    docs: new Map(docs.map((d) => [d.name, d])),
    page: apiReferencePage({ siteUrl: options.siteUrl, title: openapi.info?.title ?? 'Decision ledger', openapiUrl: '../v1/openapi.json' }),
  };
}
