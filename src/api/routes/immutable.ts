// Records are never changed: PATCH, PUT and DELETE on a record's address answer 409
// record_is_immutable (404 not_found when there is no such record).
import { Type } from '@sinclair/typebox';
import { errors } from '../../domain/errors.ts';
import { sendError } from '../errors.ts';
import { isRecordId } from '../../ledger/ids.ts';
import { errorResponses } from '../schemas.ts';
import type { App } from '../types.ts';

const IMMUTABLE = 'records are append-only: they can never be changed or deleted';
const VERBS = ['PATCH', 'PUT', 'DELETE'] as const;

export async function immutableRoutes(app: App, options: { recordExists: (id: string) => Promise<boolean> }): Promise<void> {
  // Each address of a record, with the name its GET route gives the id and a name for its operations.
  const addresses = [['/v1/decisions/:id', 'id', 'Decision'], ['/v1/proof/:record_id', 'record_id', 'Proof']] as const;
  for (const [url, param, thing] of addresses) {
    for (const method of VERBS) {
      app.route({
        method,
        url,
        schema: {
          operationId: `${method.toLowerCase()}${thing}`,
          summary: 'Refused: records are immutable',
          tags: ['records'],
          security: [],
          params: Type.Object({ [param]: Type.String() }),
          response: errorResponses(404, 409),
        },
        handler: async function refuseRecordChange(request, reply) {
          const id = (request.params as Record<string, string>)[param]!;
          if (!isRecordId(id) || !(await options.recordExists(id))) return sendError(request, reply, errors.notFound(`no record ${id}`, param));
          return sendError(request, reply, errors.recordIsImmutable(`${IMMUTABLE}; record a new decision instead`));
        },
      });
    }
  }
  for (const method of VERBS) {
    app.route({
      method,
      url: '/v1/decisions',
      schema: { operationId: `${method.toLowerCase()}Decisions`, summary: 'Refused: records are immutable', tags: ['records'], security: [], response: errorResponses(409) },
      handler: async function refuseRecordsChange(request, reply) {
        return sendError(request, reply, errors.recordIsImmutable(IMMUTABLE));
      },
    });
  }
}
