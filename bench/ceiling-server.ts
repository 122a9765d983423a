// The ceiling of the write benchmark, run as a child process: a bare fastify 5 endpoint that
// parses and validates a decision as POST /v1/decisions does (same fastify options and body
// limit, the app's lossless JSON parser, Ajv set up as the app sets it up, the same TypeBox
// schemas), then answers 201 with a fixed small JSON and stores nothing. No auth, no rate limit,
// no hashing.
import Fastify from 'fastify';
import { Type } from '@sinclair/typebox';
import { Ajv } from 'ajv';
import { BODY_LIMIT_BYTES, installJsonBody } from '../src/api/json-body.ts';
import { DecisionRequest, ErrorBody } from '../src/api/schemas.ts';
import { requestId } from '../src/ledger/ids.ts';
import { serveAsChild } from './child.ts';

const ANSWER = JSON.stringify({ object: 'decision', immutable: true, stored: false });

/** Ajv with the settings of the app's validator (src/api/app.ts): bodies never coerced or stripped, headers coerced. */
function validatorCompiler() {
  const base = { allErrors: false, strict: false, useDefaults: true, removeAdditional: false as const };
  const body = new Ajv({ ...base, coerceTypes: false });
  const other = new Ajv({ ...base, coerceTypes: true });
  for (const ajv of [body, other]) {
    ajv.addFormat('date-time', true);
    ajv.addFormat('uri', true);
    ajv.addSchema(ErrorBody);
  }
  return ({ schema, httpPart }: { schema: object; httpPart?: string }) =>
    (httpPart === 'body' ? body : other).compile(schema);
}

const app = Fastify({
  logger: { level: process.env.LEDGER_LOG_LEVEL ?? 'warn' },
  bodyLimit: BODY_LIMIT_BYTES,
  genReqId: requestId,
  requestIdHeader: false,
});
app.setValidatorCompiler(validatorCompiler());
app.addSchema(ErrorBody);
app.addHook('onRequest', async (request, reply) => {
  reply.header('request-id', request.id);
});
installJsonBody(app);

app.post('/v1/decisions', {
  schema: {
    headers: Type.Object({ 'idempotency-key': Type.String({ minLength: 8, maxLength: 255 }) }),
    body: DecisionRequest,
  },
}, async (_request, reply) => reply.code(201).type('application/json; charset=utf-8').send(ANSWER));

serveAsChild(await app.listen({ port: 0, host: '127.0.0.1' }), () => app.close());
