// Query strings are text, and the schemas let Ajv coerce them; for integers that coercion is too
// kind (Number() reads "0x10", "1e2" and " 50"). A whole-number parameter must be written in
// decimal digits, or the request is refused naming the parameter.
import type { FastifyInstance } from 'fastify';
import { errors } from '../domain/errors.ts';
import { sendError } from './errors.ts';

const DECIMAL_DIGITS = /^(0|[1-9][0-9]*)$/;

type QuerySchema = { properties?: Record<string, { type?: unknown }> };

export function installStrictQueryIntegers(app: FastifyInstance): void {
  app.addHook('preValidation', async (request, reply) => {
    const schema = request.routeOptions.schema?.querystring as QuerySchema | undefined;
    if (!schema?.properties) return;
    const query = request.query as Record<string, unknown>;
    for (const [name, property] of Object.entries(schema.properties)) {
      const value = query[name];
      if (property.type !== 'integer' || value === undefined) continue;
      if (typeof value !== 'string' || !DECIMAL_DIGITS.test(value)) {
        return sendError(request, reply, errors.invalidRequest(`${name} must be one whole number written in decimal digits`, name));
      }
    }
  });
}
