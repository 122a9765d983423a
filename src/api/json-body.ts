// The only JSON body parser: reads the raw text losslessly (numbers keep their text, duplicate
// keys and lone surrogates are refused) so canon_v1 never sees a binary float. The schema then
// validates a plain copy; handlers that hash read `request.lossless`.
import type { FastifyInstance, FastifyReply } from 'fastify';
import { readJson, toPlain, type JsonValue } from '../core/json.ts';
import { errors } from '../domain/errors.ts';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    lossless: JsonValue | undefined;
  }
}

export const BODY_LIMIT_BYTES = 128 * 1024;

// Invalid UTF-8 (such as an encoded lone surrogate) is refused, never replaced by U+FFFD and hashed.
const utf8Decoder = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

function decodeUtf8(bytes: Buffer): string | null {
  try {
    return utf8Decoder.decode(bytes);
  } catch {
    return null;
  }
}

/** The charset parameter of a Content-Type, lowercased and unquoted, or null when there is none. */
function charsetOf(contentType: string | undefined): string | null {
  const match = /;\s*charset\s*=\s*"?([^";\s]*)"?/i.exec(contentType ?? '');
  return match ? match[1]!.toLowerCase() : null;
}

export function installJsonBody(app: FastifyInstance): void {
  app.decorateRequest('lossless', undefined);
  // JSON only: fastify's default text/plain parser would hand a string to the route, a 400 where a wrong content type is a 415.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('application/json', { parseAs: 'buffer', bodyLimit: BODY_LIMIT_BYTES }, (request, bytes, done) => {
    const charset = charsetOf(request.headers['content-type']);
    if (charset !== null && charset !== 'utf-8' && charset !== 'utf8') {
      done(new ApiError(errors.unsupportedMediaType(`the request body must be UTF-8 JSON, not charset=${charset}`, 'Content-Type')), undefined);
      return;
    }
    const text = decodeUtf8(bytes as Buffer);
    if (text === null) {
      done(new ApiError(errors.invalidRequest('the request body is not valid UTF-8', 'body')), undefined);
      return;
    }
    const read = readJson(text);
    if (!read.ok) {
      const param = read.error.path || 'body';
      done(new ApiError(errors.invalidRequest(`malformed JSON: ${read.error.message}`, param)), undefined);
      return;
    }
    request.lossless = read.value;
    done(null, toPlain(read.value));
  });
}

/** Sends a JSON body that is already text: stored responses and canonical records go out byte for byte. */
export function sendJsonText(reply: FastifyReply, body: string): FastifyReply {
  return reply.type('application/json; charset=utf-8').send(body);
}
