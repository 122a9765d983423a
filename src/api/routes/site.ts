// The public site's routes (src/site): HTML pages at {site_url}, their assets, and the docs'
// Markdown and images. All public and read-only. The pages are a website, not the interface:
// they are left out of /v1/openapi.json (the spec lists no HTML endpoint), but each still
// declares an operationId and its (empty) security. Errors on these paths are answered as the
// site's 404 and error pages (see Site.errorHtml; JSON clients still get the 2.7 body).
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { errors } from '../../domain/errors.ts';
import type { Site } from '../../site/site.ts';
import { agentPage } from '../../site/pages/agent.ts';
import { docsIndexPage, guidePage } from '../../site/pages/docs.ts';
import { agentsPage, homePage } from '../../site/pages/home.ts';
import { leaderboardPage, type BoardView } from '../../site/pages/leaderboard.ts';
import { AGENT_STATUSES, type AgentStatus } from '../../domain/types.ts';
import { BOARD_SORTS, type BoardSort } from '../../directory/service.ts';
import { stringEnum } from '../schemas.ts';
import { recordPage } from '../../site/pages/record.ts';
import { transparencyPage } from '../../site/pages/transparency.ts';
import type { Page } from '../../site/layout.ts';
import { sendError, useErrorPages } from '../errors.ts';
import { installPublicHttp, notModified, type ReadLimits } from '../public-http.ts';
import { CHEAP_READ } from '../read-gate.ts';
import type { App } from '../types.ts';
import type { ReadCache } from '../read-cache.ts';
import { publicSecurity } from './public/options.ts';

export type SiteRouteOptions = { site: Site; cache: ReadCache } & ReadLimits;

/** Pages show records as they are now (new ones arrive every second); assets never change under a version. */
const PAGE_CACHE = 'public, max-age=5';
const ASSET_CACHE = 'public, max-age=31536000, immutable';

const hidden = (operationId: string, extra: Record<string, unknown> = {}) => ({
  schema: { hide: true, operationId, security: publicSecurity, tags: ['site'], ...extra },
});

const Cursor = Type.String({ maxLength: 64 });

function sendPage(site: Site, reply: FastifyReply, page: Page): FastifyReply {
  return reply.type('text/html; charset=utf-8').header('cache-control', PAGE_CACHE).send(site.render(page));
}

export async function siteRoutes(app: App, options: SiteRouteOptions): Promise<void> {
  const { site } = options;
  useErrorPages(app, (request, error) => site.errorHtml(request, error));
  await installPublicHttp(app, options);
  // Each page's Content-Security-Policy, nosniff and Referrer-Policy: response-headers.ts, app-wide.

  app.get('/', hidden('siteHome', {
    querystring: Type.Object({ cursor: Type.Optional(Cursor), include_demo: Type.Optional(Type.Boolean({ default: false })) }),
  }), async function siteHome(request, reply) {
    const q = request.query as { cursor?: string; include_demo: boolean };
    const home = await site.reads.home({ cursor: q.cursor, includeDemo: q.include_demo });
    if (!home.ok) return sendError(request, reply, home.error);
    return sendPage(site, reply, homePage(home.value));
  });

  app.get('/agents', hidden('siteAgents', {
    querystring: Type.Object({
      q: Type.Optional(Type.String({ maxLength: 64 })),
      sort: Type.Optional(stringEnum(BOARD_SORTS)),
      // The filter form sends every field, empty when not set.
      status: Type.Optional(stringEnum(['', ...AGENT_STATUSES] as const)),
      min_history_days: Type.Optional(Type.String({ pattern: '^(|0|[1-9][0-9]{0,4})$' })),
      verified: Type.Optional(Type.Boolean()),
      signed: Type.Optional(Type.Boolean()),
      include_demo: Type.Boolean({ default: false }),
      cursor: Type.Optional(Type.String({ maxLength: 300 })),
    }),
  }), async function siteAgents(request, reply) {
    const query = request.query as {
      q?: string; sort?: BoardSort; status?: AgentStatus | ''; min_history_days?: string; verified?: boolean; signed?: boolean; include_demo: boolean; cursor?: string;
    };
    const q = query.q ?? '';
    if (q.trim() !== '') {
      const found = await site.reads.agents(q);
      // A search that names one agent exactly goes to its page.
      if (found.heads.length > 0 && found.heads.some((h) => h.agent === found.q)) {
        return reply.redirect(`/agents/${encodeURIComponent(found.q)}`, 303);
      }
      return sendPage(site, reply, agentsPage(found));
    }
    const view: BoardView = {
      sort: query.sort ?? 'excess_return',
      status: query.status || null,
      minHistoryDays: query.min_history_days ? Number(query.min_history_days) : null,
      verified: query.verified ?? null,
      signed: query.signed ?? null,
      includeDemo: query.include_demo,
      cursor: query.cursor ?? null,
    };
    const page = await site.reads.board({
      sort: view.sort, cursor: view.cursor ?? undefined, status: (view.status ?? undefined) as AgentStatus | undefined, minHistoryDays: view.minHistoryDays ?? undefined,
      verified: view.verified ?? undefined, signed: view.signed ?? undefined, includeDemo: view.includeDemo,
    });
    if (!page.ok) return sendError(request, reply, page.error);
    // The directory keeps its built pages; the HTML of each is rendered once (the view is its query).
    const text = site.renderOnce(page.value, () => leaderboardPage({ page: page.value, view }));
    return reply.type('text/html; charset=utf-8').header('cache-control', PAGE_CACHE).send(text);
  });

  app.get('/agents/:handle', hidden('siteAgent', {
    params: Type.Object({ handle: Type.String({ maxLength: 64 }) }),
    querystring: Type.Object({ before: Type.Optional(Cursor) }),
  }), async function siteAgent(request, reply) {
    const { handle } = request.params as { handle: string };
    const before = (request.query as { before?: string }).before;
    const agent = await site.reads.agent(handle, before);
    if (!agent.ok) return sendError(request, reply, agent.error);
    return sendPage(site, reply, agentPage({ ...agent.value, before: before ?? null }, site.frame.siteUrl));
  });

  app.get('/records/:id', hidden('siteRecord', {
    params: Type.Object({ id: Type.String({ maxLength: 64 }) }),
  }), async function siteRecord(request, reply) {
    const record = await site.reads.record((request.params as { id: string }).id);
    if (!record.ok) return sendError(request, reply, record.error);
    return sendPage(site, reply, recordPage(record.value, site.frame.baseUrl));
  });

  app.get('/transparency', hidden('siteTransparency', {
    querystring: Type.Object({ anchors_before: Type.Optional(Type.Integer({ minimum: 1 })) }),
  }), async function siteTransparency(request, reply) {
    const cursor = (request.query as { anchors_before?: number }).anchors_before ?? null;
    const data = await site.reads.transparencyPage(cursor ?? undefined);
    return sendPage(site, reply, transparencyPage({ ...data, anchorsCursor: cursor, baseUrl: site.frame.baseUrl }));
  });

  app.get('/docs', hidden('siteDocs'), async function siteDocs(_request, reply) {
    return sendPage(site, reply, docsIndexPage(await site.docs.gettingStarted(), await site.docs.guides()));
  });

  // `/docs/<name>.md` (the Markdown itself) and `/docs/api` (the API reference) are served by the llms-and-docs routes.
  app.get('/docs/:page', hidden('siteDoc', {
    params: Type.Object({ page: Type.String({ maxLength: 80 }) }),
  }), async function siteDoc(request, reply) {
    const name = (request.params as { page: string }).page;
    const doc = await site.docs.guide(name);
    if (!doc) return sendError(request, reply, errors.notFound(`no page /docs/${name}`, 'page'));
    return sendPage(site, reply, guidePage(doc));
  });

  app.get('/docs/images/:file', {
    ...hidden('siteDocImage', { params: Type.Object({ file: Type.String({ maxLength: 80 }) }) }),
    config: CHEAP_READ,
  }, async function siteDocImage(request, reply) {
    const file = (request.params as { file: string }).file;
    const bytes = site.docs.image(file);
    if (!bytes) return sendError(request, reply, errors.notFound(`no image ${file}`, 'file'));
    return reply.type('image/png').header('cache-control', 'public, max-age=3600').send(bytes);
  });

  app.get('/assets/:file', {
    ...hidden('siteAsset', {
      params: Type.Object({ file: Type.String({ maxLength: 64 }) }),
      querystring: Type.Object({ v: Type.Optional(Type.String({ maxLength: 32 })) }),
    }),
    config: CHEAP_READ,
  }, async function siteAsset(request, reply) {
    const asset = site.assets.get((request.params as { file: string }).file);
    if (!asset) return sendError(request, reply, errors.notFound(`no asset ${(request.params as { file: string }).file}`, 'file'));
    const tag = `"${asset.version}"`;
    reply.header('etag', tag).header('cache-control', (request.query as { v?: string }).v === asset.version ? ASSET_CACHE : 'public, no-cache');
    if (notModified(request, tag)) return reply.code(304).send();
    return reply.type(asset.type).send(asset.bytes);
  });
}
