// Every error leaves the service as the interface's 2.7 body, with the request id in the body and
// in the Request-Id header. This module turns ledger errors, schema failures and framework errors
// (fastify's before routing, Node's HTTP parser's on the socket) into that body.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StoreUnavailable } from '../domain/store-health.ts';
import { errors, type LedgerError } from '../domain/errors.ts';
import { controlCharacterMessage } from '../core/decision.ts';
import { NO_CONTROL_CHARACTERS } from './schemas.ts';
import { requestId } from '../ledger/ids.ts';
import { EXPOSED_HEADERS, openToAnyOrigin } from './cors.ts';
import { markPage, markResponse } from './response-headers.ts';

export class ApiError extends Error {
  constructor(readonly error: LedgerError) {
    super(error.message);
  }
}

/** Renders an error as an HTML page (a person's browser on a site path), or null for the 2.7 body. */
export type ErrorPages = (request: FastifyRequest, error: LedgerError) => string | null;

/** Per app (keyed by its HTTP server, which every plugin context of the app shares). */
const errorPages = new WeakMap<object, ErrorPages>();

/** From now on, errors on the public site's paths are answered as pages (content negotiation). */
export function useErrorPages(app: FastifyInstance, pages: ErrorPages): void {
  errorPages.set(app.server, pages);
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: LedgerError): FastifyReply {
  const { status, ...fields } = error;
  // Some answers are sent where no hook runs (fastify's refusals before routing): headers here too.
  markResponse(request, reply);
  const page = errorPages.get(request.server.server)?.(request, error) ?? null;
  if (page !== null) return markPage(reply).code(status).type('text/html; charset=utf-8').header('cache-control', 'no-store').send(page);
  return reply.code(status).type('application/json; charset=utf-8').send({ error: { ...fields, request_id: request.id } });
}

type AjvError = { instancePath?: string; keyword: string; params?: Record<string, unknown>; message?: string };

/** The dotted path of a failing field, from an Ajv error (`/metadata/a/0` -> `metadata.a.0`). */
function paramOf(e: AjvError, context: string | undefined): string {
  const path = (e.instancePath ?? '').split('/').slice(1).map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  const named = e.params?.missingProperty ?? e.params?.additionalProperty;
  if (typeof named === 'string') path.push(named);
  return path.join('.') || (context === 'body' ? 'body' : context ?? '');
}

function validationMessage(e: AjvError, param: string): string {
  switch (e.keyword) {
    case 'required': return `${param} is required`;
    case 'additionalProperties': return `${param} is not a known field`;
    case 'anyOf': return `${param} must be a decimal: a JSON number or a string such as "12.5"`;
    case 'enum': return `${param} must be one of ${(e.params?.allowedValues as unknown[] | undefined)?.join(', ')}`;
    case 'pattern': return e.params?.pattern === NO_CONTROL_CHARACTERS ? controlCharacterMessage(param) : `${param} ${e.message ?? 'is invalid'}`;
    default: return `${param} ${e.message ?? 'is invalid'}`;
  }
}

export function fromValidation(validation: AjvError[], context: string | undefined): LedgerError {
  // A decimal field fails both branches of its anyOf; report the anyOf, not the first branch.
  const first = validation.find((e) => e.keyword === 'anyOf') ?? validation[0]!;
  const param = paramOf(first, context);
  return errors.invalidRequest(validationMessage(first, param), param);
}

function fromFramework(err: FastifyError, method: string): LedgerError {
  switch (err.code) {
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return errors.unsupportedMediaType('the request body must be application/json', 'Content-Type');
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return errors.requestTooLarge('the request body is too large', 'body');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return errors.invalidRequest('the request body is empty', 'body');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return errors.invalidRequest('Content-Length does not match the body', 'Content-Length');
  }
  const status = err.statusCode ?? 500;
  if (status === 404) return errors.notFound(err.message);
  if (status === 503) return errors.serviceUnavailable('the service is shutting down; retry shortly');
  if (status >= 400 && status < 500) return { ...errors.invalidRequest(err.message), status };
  const recorded = method === 'GET' || method === 'HEAD' ? '' : '; nothing was recorded';
  return errors.internalError(`something went wrong on our side${recorded}`);
}

/** Seconds a client is told to wait when the database is not answering. */
const RETRY_AFTER_UNAVAILABLE_S = 2;

const loggedUnavailable = new WeakSet<StoreUnavailable>();

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
    if (err instanceof ApiError) return sendError(request, reply, err.error);
    if (err instanceof StoreUnavailable) {
      // A batch of appends that failed together shares one error: its cause is logged once.
      if (loggedUnavailable.has(err)) request.log.warn('database unavailable (the cause is logged above)');
      else request.log.warn({ err: err.message }, 'database unavailable');
      loggedUnavailable.add(err);
      reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
      return sendError(request, reply, errors.serviceUnavailable('the database is not answering; nothing was recorded; retry shortly'));
    }
    if (err.validation) return sendError(request, reply, fromValidation(err.validation, err.validationContext));
    const error = fromFramework(err, request.method);
    if (error.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(request, reply, error);
  });
  app.addHook('onRequest', async (request, reply) => {
    if (request.raw.httpVersion === '1.1' && request.headers.host === undefined) {
      return sendError(request, reply, errors.invalidRequest('an HTTP/1.1 request needs a Host header', 'Host'));
    }
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    // No route, so nothing but this answer to protect: a script on any origin may read it.
    openToAnyOrigin(reply);
    return sendError(request, reply, errors.notFound(`no such endpoint: ${request.method} ${path}`));
  });
}

/** The longest path segment a route matches (fastify's maxParamLength, its default). */
export const MAX_PATH_SEGMENT = 100;

/**
 * The errors fastify meets before a route runs, answered in the 2.7 body too (fastify's
 * `frameworkErrors`): a path whose percent-encoding is not valid, a path segment longer than any
 * route takes. No route was found, so, as a 404, any origin may read the answer.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  openToAnyOrigin(reply);
  if (error.code === 'FST_ERR_BAD_URL') {
    sendError(request, reply, errors.invalidRequest('the URL path is not valid percent-encoded UTF-8', 'path'));
    return;
  }
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') {
    sendError(request, reply, errors.invalidRequest(`a segment of the URL path is longer than ${MAX_PATH_SEGMENT} characters`, 'path'));
    return;
  }
  sendError(request, reply, errors.invalidRequest(error.message));
}

/**
 * Requests Node's HTTP parser refuses (malformed or folded headers, bare LF, conflicting
 * Content-Length, bad chunks, control bytes, oversized headers) never reach fastify: they are
 * answered here, on the socket, in the 2.7 body with a request id made here (in the body and the
 * Request-Id header alike), and the connection is closed.
 */
export function clientErrorResponse(err: { code?: string }): string {
  const tooLarge = err.code === 'HPE_HEADER_OVERFLOW';
  const { status, ...error } = tooLarge
    ? errors.headersTooLarge('the request headers or URL are too large', 'headers')
    : errors.invalidRequest('the HTTP request is malformed and could not be read');
  const id = requestId();
  const body = JSON.stringify({ error: { ...error, request_id: id } });
  return `HTTP/1.1 ${status} ${tooLarge ? 'Request Header Fields Too Large' : 'Bad Request'}\r\n` +
    'Content-Type: application/json; charset=utf-8\r\n' +
    `Request-Id: ${id}\r\n` +
    'X-Content-Type-Options: nosniff\r\n' +
    'Access-Control-Allow-Origin: *\r\n' +
    `Access-Control-Expose-Headers: ${EXPOSED_HEADERS}\r\n` +
    'Connection: close\r\n' +
    `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`;
}

