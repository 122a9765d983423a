// What the site says about the service: {site_url}/llms.txt (interface endpoint 12) and
// /llms-full.txt, the docs as Markdown at /docs/<name>.md, and the API reference page /docs/api
// with its assets. Generated once, on first request, from the live OpenAPI document and the docs/
// files (site/llms.ts, site/docs.ts), then served from memory with an ETag. No read rate limit:
// every answer is a few hundred kilobytes at most, already built.
import compress from '@fastify/compress';
import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { errors } from '../../ledger/errors.ts';
import { API_REFERENCE_CSP, ApiReferenceAssets, apiReferencePage, pickEncoding } from '../../site/api-reference.ts';
import { DOC_NAME, readDocs, type DocFile } from '../../site/docs.ts';
import { LlmsText, type OpenApi } from '../../site/llms.ts';
import { sendError } from '../errors.ts';
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
};

/** The texts change only with a new release; a reader revalidates them after an hour. */
const TEXT_CACHE = 'public, max-age=3600';
/** The script's URL carries its version, so it is kept for a day. */
const ASSET_CACHE = 'public, max-age=86400';

const TEXT = 'text/plain; charset=utf-8';
const MARKDOWN = 'text/markdown; charset=utf-8';

type Built = { llms: string; full: string; docs: Map<string, DocFile>; page: string };

export async function llmsAndDocsRoutes(app: App, options: LlmsRouteOptions): Promise<void> {
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
  }, async function getLlmsFullTxt(_request, reply) {
    return answer(reply, TEXT, (await texts()).full);
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

  app.get('/docs/api/:asset', { schema: { hide: true } }, async function getApiReferenceAsset(request, reply) {
    const name = (request.params as { asset: string }).asset;
    const loading = assets.get(name);
    if (!loading) return sendError(request, reply, errors.notFound(`no asset ${name}`, 'asset'));
    const asset = await loading;
    const encoding = pickEncoding(request.headers['accept-encoding']);
    const body = encoding === 'identity' ? asset.identity : asset[encoding];
    reply.header('cache-control', ASSET_CACHE).header('vary', 'Accept-Encoding');
    reply.header('etag', encoding === 'identity' ? asset.etag : `${asset.etag.slice(0, -1)}-${encoding}"`);
    if (encoding !== 'identity') reply.header('content-encoding', encoding);
    return reply.type(asset.type).send(body);
  });
}

async function build(options: LlmsRouteOptions): Promise<Built> {
  const docs = await readDocs(options.docsDir);
  const openapi = options.openapi() as OpenApi;
  const llms = new LlmsText({ siteUrl: options.siteUrl, baseUrl: options.baseUrl, openapi, docs });
  return {
    llms: llms.text(),
    full: llms.fullText(),
    docs: new Map(docs.map((d) => [d.name, d])),
    page: apiReferencePage({ siteUrl: options.siteUrl, title: openapi.info?.title ?? 'Decision ledger', openapiUrl: '../v1/openapi.json' }),
  };
}
