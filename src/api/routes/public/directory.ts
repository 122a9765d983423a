// GET /v1/agents: the directory of every agent with its headline figures, filtered, sorted and
// paged (src/directory/service.ts; docs/leaderboard.md). Public, behind the read gate and limits
// like every public read. Bounded: at most 200 rows, each about 1 KB and at most about 2 KB (a
// 120-character display name, 32 curve points, fixed-width figures), so a page stays under 512 KiB.
import type { FastifyReply } from 'fastify';
import type { AgentStatus } from '../../../domain/types.ts';
import { directoryCsv } from '../../../directory/service.ts';
import type { BoardSort } from '../../../directory/service.ts';
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { DirectoryQuery, DirectoryResponse } from './directory-schemas.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';

export async function directoryRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/agents', {
    schema: {
      operationId: 'listDirectory',
      security: publicSecurity,
      summary: 'The directory: every agent, with headline figures, ranked only on what can be checked',
      description: 'Every agent that ever recorded (retired ones kept and marked), with its record counts, share signed, share of executions linked by link token, model and broker returns, excess return over the benchmark, Sharpe and maximum drawdown, each null below its minimum history. Figures come from the stored reports, as of `as_of`; nothing is computed per request. Demo agents and synthetic figures are left out unless include_demo=true, and counted. `format=csv` answers the same page as text/csv, the next page in the Link header.',
      tags: PUBLIC_TAG,
      querystring: DirectoryQuery,
      produces: ['application/json', 'text/csv'],
      response: { 200: DirectoryResponse, ...errorResponses(400, 429) },
    },
  }, async function listAgents(request, reply) {
    const q = request.query;
    const page = await options.directory.list({
      sort: q.sort as BoardSort, limit: q.limit, cursor: q.cursor, status: q.status as AgentStatus | undefined, minHistoryDays: q.min_history_days,
      verified: q.verified, signed: q.signed, includeDemo: q.include_demo,
    });
    if (!page.ok) return sendError(request, reply, page.error);
    cacheFor(reply, 'short');
    if (q.format === 'csv') {
      const raw = reply as FastifyReply; // the CSV is outside the documented JSON schema
      if (page.value.next !== null) raw.header('link', `<${page.value.next}&format=csv>; rel="next"`);
      raw.header('content-disposition', 'inline; filename="agents.csv"');
      return raw.type('text/csv; charset=utf-8; header=present').send(directoryCsv(page.value));
    }
    return sendJsonText(reply, JSON.stringify(page.value));
  });
  preflightRoute(app, '/v1/agents');
}
