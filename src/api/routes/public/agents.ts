// GET /v1/agents/{handle}: the public profile (interface section 4, endpoint 5).
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { HandleParams, ProfileResponse } from './schemas.ts';

export async function agentRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/agents/:handle', {
    schema: {
      operationId: 'getAgent',
      security: publicSecurity,
      summary: 'An agent\'s public profile',
      description: 'Handle, status, demo flag, chain head, record counts, signing keys (public halves), and the portfolio, performance and caveat sections. The public id of an agent is its handle.',
      tags: PUBLIC_TAG,
      params: HandleParams,
      response: { 200: ProfileResponse, ...errorResponses(404, 429) },
    },
  }, async function getAgent(request, reply) {
    const urls = options.reads.urls;
    const performance = options.performance;
    const profile = await options.reads.profile(request.params.handle, (agent) =>
      performance.profile(agent, (portfolio, format) => urls.performanceUrl(agent.handle, portfolio, format)));
    if (!profile.ok) return sendError(request, reply, profile.error);
    cacheFor(reply, 'short');
    return sendJsonText(reply, JSON.stringify(profile.value));
  });
  preflightRoute(app, '/v1/agents/:handle');
}
