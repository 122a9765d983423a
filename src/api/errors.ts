// Every error leaves the service as the interface's 2.7 body, with the request id. This module
// turns ledger errors, schema failures and framework errors into that body.
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { StoreUnavailable } from '../store/port.ts';
import { errors, type LedgerError } from '../ledger/errors.ts';

export class ApiError extends Error {
  constructor(readonly error: LedgerError) {
    super(error.message);
  }
}

export function sendError(request: FastifyRequest, reply: FastifyReply, error: LedgerError): FastifyReply {
  const { status, ...fields } = error;
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
    default: return `${param} ${e.message ?? 'is invalid'}`;
  }
}

export function fromValidation(validation: AjvError[], context: string | undefined): LedgerError {
  // A decimal field fails both branches of its anyOf; report the anyOf, not the first branch.
  const first = validation.find((e) => e.keyword === 'anyOf') ?? validation[0]!;
  const param = paramOf(first, context);
  return errors.invalidRequest(validationMessage(first, param), param);
}

function fromFramework(err: FastifyError): LedgerError {
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
  return errors.internalError('something went wrong on our side; nothing was recorded');
}

/** Seconds a client is told to wait when the database is not answering. */
const RETRY_AFTER_UNAVAILABLE_S = 2;

export function installErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((err: FastifyError & { validation?: AjvError[]; validationContext?: string }, request, reply) => {
    if (err instanceof ApiError) return sendError(request, reply, err.error);
    if (err instanceof StoreUnavailable) {
      request.log.warn({ err: err.message }, 'database unavailable');
      reply.header('retry-after', String(RETRY_AFTER_UNAVAILABLE_S));
      return sendError(request, reply, errors.serviceUnavailable('the database is not answering; nothing was recorded; retry shortly'));
    }
    if (err.validation) return sendError(request, reply, fromValidation(err.validation, err.validationContext));
    const error = fromFramework(err);
    if (error.status >= 500) request.log.error({ err }, 'request failed');
    return sendError(request, reply, error);
  });
  app.setNotFoundHandler((request, reply) => {
    const path = request.url.split('?')[0];
    return sendError(request, reply, errors.notFound(`no such endpoint: ${request.method} ${path}`));
  });
}
