// GET /v1/agents/{handle}/performance?portfolio=model|broker[&format=csv][&benchmark_return=total|price]:
// a portfolio's daily series and metrics (docs/perf_v1.md). Public, cached like the profile.
// GET .../performance/inputs: the inputs bundle of that report (performance/bundle.ts), streamed.
import { Readable } from 'node:stream';
import { Type } from '@sinclair/typebox';
import type { FastifyReply } from 'fastify';
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import type { BenchmarkReturn, Portfolio } from '../../../method/perf/engine.ts';
import { outcomeCursor, outcomesCsv, seqOfCursor } from '../../../performance/outcome-pages.ts';
import { outcomesDocument, performanceCsv, performanceDocument } from '../../../performance/views.ts';
import { errors } from '../../../domain/errors.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { INPUTS_DESCRIPTION, InputsQuery, OutcomesQuery, OutcomesResponse, PerformanceQuery, PerformanceResponse } from './performance-schemas.ts';
import { HandleParams } from './schemas.ts';
import { pacedLines } from '../../../runtime/loop-share.ts';

export async function performanceRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  const performance = options.performance;
  app.get('/v1/agents/:handle/performance', {
    schema: {
      operationId: 'getPerformance',
      security: publicSecurity,
      summary: 'A portfolio\'s daily series and performance metrics',
      description: 'The model portfolio (each decision applied at the price observed when the service received it) or the broker portfolio (imported fills, trade-derived: no deposits, withdrawals or dividends), valued at each benchmark close from the first record on, with the metrics, the benchmark\'s, hit rates and caveats. perf_v2 (docs/perf_v1.md §4.2): raw closes, splits and dividends applied to the holdings (`corporate_actions` lists each event, `restatement` says when figures changed after a late action), the benchmark\'s total return, or its price return with `benchmark_return=price`. `format=csv` answers the series alone (text/csv: date, value, daily_return, benchmark_value). Synthetic prices say `synthetic: true`. 502 provider_error when the market-data provider fails and no report was stored yet; a stored report is served instead, with `stale` set.',
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
    const report = await performance.report(found.value, portfolio, { benchmark_return: (request.query.benchmark_return ?? 'total') as BenchmarkReturn });
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
      ...(portfolio === 'model' ? { outcomes: urls.outcomesUrl(handle) } : {}),
    };
    return sendJsonText(reply, JSON.stringify(performanceDocument(handle, report.value, links)));
  });
  preflightRoute(app, '/v1/agents/:handle/performance');

  app.get('/v1/agents/:handle/performance/inputs', {
    schema: {
      operationId: 'getPerformanceInputs',
      security: publicSecurity,
      summary: 'Every input of a portfolio\'s report, to compute it again (NDJSON, streamed)',
      description: INPUTS_DESCRIPTION,
      tags: PUBLIC_TAG,
      params: HandleParams,
      querystring: InputsQuery,
      produces: ['application/x-ndjson'],
      response: {
        200: Type.String({ description: 'NDJSON (perf_inputs_v1): a header line, the records, the corporate actions, the closes, an end line.' }),
        ...errorResponses(400, 404, 429, 502),
      },
    },
  }, async function getPerformanceInputs(request, reply) {
    const { handle } = request.params;
    const portfolio = (request.query.portfolio ?? 'model') as Portfolio;
    const found = await options.reads.agentByHandle(handle);
    if (!found.ok) return sendError(request, reply, found.error);
    const bundle = await performance.inputs(found.value, portfolio);
    if (!bundle.ok) return sendError(request, reply, bundle.error);
    cacheFor(reply, 'short');
    const raw = reply as FastifyReply; // a stream is outside the documented 200 schema
    raw.header('content-disposition', `attachment; filename="${handle}-${portfolio}-inputs.ndjson"`);
    raw.type('application/x-ndjson; charset=utf-8');
    return raw.send(Readable.from(pacedLines(bundle.value.lines), { objectMode: false }));
  });
  preflightRoute(app, '/v1/agents/:handle/performance/inputs');

  app.get('/v1/agents/:handle/performance/outcomes', {
    schema: {
      operationId: 'listDecisionOutcomes',
      security: publicSecurity,
      summary: 'Each decision\'s outcome at 1, 5 and 21 closes and at its stated horizon',
      description: 'The decisions of the agent in chain order, a page at a time, each with its price at receipt and its return at the 1st, 5th and 21st close of its symbol after its date and at its stated time_horizon when that parses (perf_v1 §5), with the close used; null with the reason when there is none (no price at receipt, pending, no closes). Counted against the model report\'s closes through its as_of, so the hits add up to its hit_rate. `format=csv` answers the same page as text/csv, the next page in the Link header.',
      tags: PUBLIC_TAG,
      params: HandleParams,
      querystring: OutcomesQuery,
      produces: ['application/json', 'text/csv'],
      response: { 200: OutcomesResponse, ...errorResponses(400, 404, 429, 502) },
    },
  }, async function listDecisionOutcomes(request, reply) {
    const { handle } = request.params;
    const { limit, cursor, format } = request.query;
    const afterSeq = cursor === undefined ? 0 : seqOfCursor(cursor);
    if (afterSeq === null) return sendError(request, reply, errors.invalidRequest('cursor is not one this service gave: pass next_cursor of the previous page', 'cursor'));
    const found = await options.reads.agentByHandle(handle);
    if (!found.ok) return sendError(request, reply, found.error);
    const page = await performance.outcomes(found.value, afterSeq, limit);
    if (!page.ok) return sendError(request, reply, page.error);
    cacheFor(reply, 'short');
    const urls = options.reads.urls;
    const nextCursor = page.value.hasMore ? outcomeCursor(page.value.lastSeq) : null;
    const here = { cursor: cursor ?? null, limit };
    const next = (f: 'json' | 'csv') => (nextCursor === null ? null : urls.outcomesUrl(handle, { cursor: nextCursor, limit, format: f }));
    const raw = reply as FastifyReply; // the CSV is outside the documented JSON schema
    if (format === 'csv') {
      const link = next('csv');
      if (link !== null) raw.header('link', `<${link}>; rel="next"`);
      raw.header('content-disposition', `inline; filename="${handle}-outcomes.csv"`);
      return raw.type('text/csv; charset=utf-8; header=present').send(outcomesCsv(page.value.rows));
    }
    const links = { performance: urls.performanceUrl(handle, 'model'), csv: urls.outcomesUrl(handle, { ...here, format: 'csv' }), export: urls.exportUrl(handle) };
    const paging = { url: `/v1/agents/${handle}/performance/outcomes`, nextCursor, next: next('json') };
    return sendJsonText(reply, JSON.stringify(outcomesDocument(handle, page.value, paging, links)));
  });
  preflightRoute(app, '/v1/agents/:handle/performance/outcomes');
}
