// GET /v1/agents/{handle}/performance?portfolio=model|broker[&format=csv]: a portfolio's daily
// series and perf_v1 metrics (docs/performance-method.md). Public, cached like the profile.
import type { FastifyReply } from 'fastify';
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import type { Portfolio } from '../../../performance/engine.ts';
import { performanceCsv, performanceDocument } from '../../../performance/views.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { PerformanceQuery, PerformanceResponse } from './performance-schemas.ts';
import { HandleParams } from './schemas.ts';

export async function performanceRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  const performance = options.performance;
  app.get('/v1/agents/:handle/performance', {
    schema: {
      operationId: 'getPerformance',
      security: publicSecurity,
      summary: 'A portfolio\'s daily series and performance metrics',
      description: 'The model portfolio (each decision applied at the price observed when the service received it) or the broker portfolio (imported fills, trade-derived: no deposits, withdrawals or dividends), valued at each benchmark close from the first record on, with perf_v1 metrics, the benchmark\'s, hit rates and caveats. `format=csv` answers the series alone (text/csv: date, value, daily_return, benchmark_value). Synthetic prices say `synthetic: true`. 502 provider_error when the market-data provider fails and no report was stored yet; a stored report is served instead, with `stale` set.',
      tags: PUBLIC_TAG,
      params: HandleParams,
      querystring: PerformanceQuery,
      produces: ['application/json', 'text/csv'],
      response: { 200: PerformanceResponse, ...errorResponses(400, 404, 429, 502) },
    },
  }, async function getPerformance(request, reply) {
    const { handle } = request.params;
    const portfolio = (request.query.portfolio ?? 'model') as Portfolio;
    const found = await options.reads.agentByHandle(handle);
    if (!found.ok) return sendError(request, reply, found.error);
    const report = await performance.report(found.value, portfolio);
    if (!report.ok) return sendError(request, reply, report.error);
    cacheFor(reply, 'short');
    const raw = reply as FastifyReply; // the CSV is outside the documented JSON schema
    if (request.query.format === 'csv') {
      raw.header('content-disposition', `inline; filename="${handle}-${portfolio}.csv"`);
      return raw.type('text/csv; charset=utf-8; header=present').send(performanceCsv(report.value));
    }
    const urls = options.reads.urls;
    const links = {
      self: urls.performanceUrl(handle, portfolio),
      csv: urls.performanceUrl(handle, portfolio, 'csv'),
      profile: urls.profileUrl(handle),
      export: urls.exportUrl(handle),
    };
    return sendJsonText(reply, JSON.stringify(performanceDocument(handle, report.value, links)));
  });
  preflightRoute(app, '/v1/agents/:handle/performance');
}
