// Records are never changed: PATCH, PUT and DELETE on a record's address answer 409
// record_is_immutable (404 not_found when there is no such record).
import { Type } from '@sinclair/typebox';
import { errors } from '../../ledger/errors.ts';
import { sendError } from '../errors.ts';
import { isRecordId } from '../../ledger/ids.ts';
import { errorResponses } from '../schemas.ts';
import type { App } from '../types.ts';

export async function immutableRoutes(app: App, options: { recordExists: (id: string) => Promise<boolean> }): Promise<void> {
  // Each address of a record, with the name its GET route gives the id.
  const addresses = [['/v1/decisions/:id', 'id'], ['/v1/proof/:record_id', 'record_id']] as const;
  for (const [url, param] of addresses) {
    app.route({
      method: ['PATCH', 'PUT', 'DELETE'],
      url,
      schema: {
        summary: 'Refused: records are immutable',
        tags: ['records'],
        params: Type.Object({ [param]: Type.String() }),
        response: errorResponses(404, 409),
      },
      handler: async (request, reply) => {
        const id = (request.params as Record<string, string>)[param]!;
        if (!isRecordId(id) || !(await options.recordExists(id))) return sendError(request, reply, errors.notFound(`no record ${id}`, param));
        return sendError(request, reply, errors.recordIsImmutable('records are append-only: they can never be changed or deleted; record a new decision instead'));
      },
    });
  }
  app.route({
    method: ['PATCH', 'PUT', 'DELETE'],
    url: '/v1/decisions',
    schema: { summary: 'Refused: records are immutable', tags: ['records'], response: errorResponses(409) },
    handler: async (request, reply) => sendError(request, reply, errors.recordIsImmutable('records are append-only: they can never be changed or deleted')),
  });
}
