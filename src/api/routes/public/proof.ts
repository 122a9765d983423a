// GET /v1/proof/{record_id}: one record with everything needed to verify it alone (interface
// section 4, endpoint 7).
import { sendError } from '../../errors.ts';
import { sendJsonText } from '../../json-body.ts';
import { cacheFor, preflightRoute } from '../../public-http.ts';
import { errorResponses } from '../../schemas.ts';
import type { App } from '../../types.ts';
import { proofBody } from './bodies.ts';
import { PUBLIC_TAG, publicSecurity, type PublicRouteOptions } from './options.ts';
import { ProofParams, ProofResponse } from './schemas.ts';

export async function proofRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  app.get('/v1/proof/:record_id', {
    schema: {
      operationId: 'getProof',
      security: publicSecurity,
      summary: 'The proof bundle of one record',
      tags: PUBLIC_TAG,
      params: ProofParams,
      response: { 200: ProofResponse, ...errorResponses(404, 429) },
    },
  }, async function getProof(request, reply) {
    let settled = true;
    const proof = await options.reads.proof(request.params.record_id, async (record) => {
      const [section, anchor, price] = await Promise.all([options.log.proofSection(record.id), options.anchors.proofSection(record.id), options.prices.proofSection(record)]);
      settled = section.inclusion_proof !== null && price.settled;
      return { ...section, ...anchor, ...price.section };
    });
    if (!proof.ok) return sendError(request, reply, proof.error);
    cacheFor(reply, settled ? 'proof' : 'short');
    return sendJsonText(reply, proofBody(proof.value));
  });
  preflightRoute(app, '/v1/proof/:record_id');
}
