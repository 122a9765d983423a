// The tools an agent gets: record a decision (signed when a key file is configured), read a proof
// (verified), verify an agent's whole chain, read performance, list its own decisions, search the
// public ledger. Each input schema comes from the interface's OpenAPI document (schemas.ts); each
// call goes through the client (src/client), so the tools work against any deployment.
import { verifyDocument, type LedgerClient, type Signer, type Verification } from '../client/index.ts';
import { bodySchema, headerSchema, operationIdAt, parametersSchema, type ObjectSchema } from './schemas.ts';

export type ToolContext = { client: LedgerClient; signer: Signer | null };

export type Tool = {
  name: string;
  title: string;
  description: string;
  inputSchema: ObjectSchema;
  annotations: { readOnlyHint: boolean; idempotentHint: boolean; openWorldHint: boolean };
  run: (args: Record<string, unknown>, ctx: ToolContext) => Promise<unknown>;
};

const PERFORMANCE_PATH = '/v1/agents/{handle}/performance';
const LISTED_FAILURES = 20;

/** A verification as a tool shows it: the verdict, each check, and the first failures. */
export function verificationSummary(v: Verification) {
  const failures = v.checks.flatMap((c) => c.failures).slice(0, LISTED_FAILURES);
  return {
    ok: v.ok,
    verdict: v.ok ? `PASS: ${v.records} record(s) of ${v.subject} verified` : `FAIL: ${v.checks.filter((c) => c.ok === false).map((c) => c.name).join(', ')}`,
    subject: v.subject,
    records: v.records,
    checks: v.checks.map((c) => ({ name: c.name, ok: c.ok, summary: c.summary })),
    failures,
    failure_count: v.failureCount,
  };
}

function recordDecisionSchema(): ObjectSchema {
  const schema = bodySchema('recordDecision');
  delete schema.properties.signature;
  schema.properties.idempotency_key = {
    ...headerSchema('recordDecision', 'idempotency-key'),
    description: 'Optional. The Idempotency-Key: pass the one an earlier call answered with to retry it safely (no second record). Default: a fresh key, kept across the tool\'s own retries.',
  };
  return schema;
}

function performanceSchema(): ObjectSchema {
  const id = operationIdAt(PERFORMANCE_PATH, 'get');
  return id ? parametersSchema(id) : parametersSchema('getAgent', ['handle']);
}

const readOnly = { readOnlyHint: true, idempotentHint: true, openWorldHint: true };

export function ledgerTools(): Tool[] {
  const verifySchema = parametersSchema('getAgent', ['handle']);
  verifySchema.properties.via = {
    type: 'string', enum: ['export', 'chain'], default: 'export',
    description: 'Read the chain from the agent\'s export (default, streamed) or from its chain pages.',
  };
  return [
    {
      name: 'record_decision',
      title: 'Record a decision',
      description: 'Records an investing decision (what and why) permanently in the agent\'s public, hash-chained track record, before trading. '
        + 'Signed with the agent\'s Ed25519 key when the server has a key file. Answers the record with its hashes, link_token (stamp it into the broker order\'s client_order_id) and proof_url.',
      inputSchema: recordDecisionSchema(),
      annotations: { readOnlyHint: false, idempotentHint: false, openWorldHint: true },
      run: async (args, { client, signer }) => {
        const { idempotency_key: key, ...decision } = args;
        const recorded = await client.recordDecision(decision as never, {
          ...(typeof key === 'string' ? { idempotencyKey: key } : {}),
          ...(signer ? { signer } : { signer: false }),
        });
        return recorded;
      },
    },
    {
      name: 'get_proof',
      title: 'Get and verify a proof',
      description: 'Reads the proof bundle of one record (GET /v1/proof/{record_id}) and verifies it: content and chain hashes, the agent\'s signature, the published head, and inclusion in the global log when present.',
      inputSchema: parametersSchema('getProof'),
      annotations: readOnly,
      run: async (args, { client }) => {
        const id = String(args.record_id);
        const proof = await client.getProof(id);
        return { proof, verification: verificationSummary(await verifyDocument(proof, { baseUrl: client.baseUrl, fetch: client.transport.fetch })) };
      },
    },
    {
      name: 'verify_agent',
      title: 'Verify an agent\'s track record',
      description: 'Recomputes an agent\'s whole hash chain from what the service publishes (canon_v1 §5 checks: every hash, link, timestamp order and signature, up to the published head) and says whether it is intact.',
      inputSchema: verifySchema,
      annotations: readOnly,
      run: async (args, { client }) => verificationSummary(await client.verifyAgent(String(args.handle), { via: args.via === 'chain' ? 'chain' : 'export' })),
    },
    {
      name: 'get_performance',
      title: 'Get an agent\'s performance',
      description: 'Reads an agent\'s performance report (GET /v1/agents/{handle}/performance), with its caveats.',
      inputSchema: performanceSchema(),
      annotations: readOnly,
      run: async (args, { client }) => {
        const { handle, ...query } = args;
        return client.getPerformance(String(handle), query as never);
      },
    },
    {
      name: 'list_decisions',
      title: 'List my decisions',
      description: 'Lists the calling agent\'s own decisions, newest first, with their content; pass next_cursor as cursor for older ones.',
      inputSchema: parametersSchema('listDecisions'),
      annotations: readOnly,
      run: async (args, { client }) => client.listDecisions(args as never),
    },
    {
      name: 'search_ledger',
      title: 'Search the public ledger',
      description: 'Searches every agent\'s public records, newest first, by symbol, agent, and record type; pass next_cursor as cursor for older ones.',
      inputSchema: parametersSchema('listLedger'),
      annotations: readOnly,
      run: async (args, { client }) => client.listLedger(args as never),
    },
  ];
}
