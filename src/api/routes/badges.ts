// GET {site_url}/badge/<handle>.svg: an agent's badge (interface section 4, endpoint 13; rule 9).
// Always an image for a well-formed request, so an embed never breaks: an unknown agent gets a
// neutral badge that says so, with 200. Only a `style` outside the three is refused (400, the
// 2.7 body). Cached briefly, with a weak ETag over the SVG and 304 on If-None-Match.
// No read rate limit: image proxies fetch for many readers from few addresses, and a badge costs
// at most a few indexed reads, reused for seconds (site/badges.ts). The read gate applies (its
// bound is on reads at once, not per minute), so a flood of badge requests waits its turn.
import etag from '@fastify/etag';
import { Type } from '@sinclair/typebox';
import { BADGE_STYLES, DEFAULT_BADGE_STYLE, type BadgeStyle } from '../../site/badge.ts';
import type { Badges } from '../../site/badges.ts';
import { errorResponses, stringEnum } from '../schemas.ts';
import type { App } from '../types.ts';
import { installReadLimits } from '../public-http.ts';
import type { ReadHandoff } from '../read-handoff.ts';
import type { ReadGate } from '../read-gate.ts';
import { PUBLIC_TAG, publicSecurity } from './public/options.ts';

/** Cache-Control of a badge, and of the neutral badge of an unknown agent (which may be created any minute). */
export const BADGE_CACHE = { known: 'public, max-age=300', unknown: 'public, max-age=60' } as const;

const BadgeParams = Type.Object({ handle: Type.String({ description: 'The agent\'s handle (any other text gets the unknown-agent badge).' }) });
const BadgeQuery = Type.Object({
  style: Type.Optional(stringEnum(BADGE_STYLES, {
    description: '`return`: return since the first record against the benchmark; `verified`: share of executions linked by link token and share of decisions signed; `record` (the default): records and days on the ledger.',
  })),
});

export async function badgeRoutes(app: App, options: { badges: Badges; gate: ReadGate; handoff: ReadHandoff | null }): Promise<void> {
  installReadLimits(app, { gate: options.gate, handoff: options.handoff });
  await app.register(etag, { weak: true });
  app.get('/badge/:handle.svg', {
    schema: {
      operationId: 'getBadge',
      security: publicSecurity,
      summary: 'An agent\'s badge (SVG)',
      description: 'A shields-style SVG badge of the agent\'s record, for READMEs and profiles. A dash (—) when the history is too short for the number; amber, with the word `synthetic` or `demo`, when any input is synthetic or the agent is a demo agent; a grey `unknown agent` badge (still 200) for a handle that names no agent. See docs/badges.md.',
      tags: PUBLIC_TAG,
      params: BadgeParams,
      querystring: BadgeQuery,
      produces: ['image/svg+xml'],
      response: { 200: Type.String({ description: 'An SVG image.' }), ...errorResponses(400) },
    },
  }, async function getBadge(request, reply) {
    const badge = await options.badges.badge(request.params.handle, (request.query.style as BadgeStyle | undefined) ?? DEFAULT_BADGE_STYLE);
    reply.header('cache-control', badge.known ? BADGE_CACHE.known : BADGE_CACHE.unknown);
    reply.header('access-control-allow-origin', '*');
    reply.header('content-security-policy', "default-src 'none'");
    reply.header('x-content-type-options', 'nosniff');
    return reply.type('image/svg+xml; charset=utf-8').send(badge.svg);
  });
}
