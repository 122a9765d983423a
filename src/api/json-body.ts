// The only JSON body parser: reads the raw text losslessly (numbers keep their text, duplicate
// keys and lone surrogates are refused) so canon_v1 never sees a binary float. The schema then
// validates a plain copy; handlers that hash read `request.lossless`.
import type { FastifyInstance } from 'fastify';
import { readJson, toPlain, type JsonValue } from '../core/json.ts';
import { errors } from '../ledger/errors.ts';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    lossless: JsonValue | undefined;
  }
}

export const BODY_LIMIT_BYTES = 128 * 1024;

export function installJsonBody(app: FastifyInstance): void {
  app.decorateRequest('lossless', undefined);
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string', bodyLimit: BODY_LIMIT_BYTES }, (request, text, done) => {
    const read = readJson(text as string);
    if (!read.ok) {
      const param = read.error.path || 'body';
      done(new ApiError(errors.invalidRequest(`malformed JSON: ${read.error.message}`, param)), undefined);
      return;
    }
    request.lossless = read.value;
    done(null, toPlain(read.value));
  });
}
