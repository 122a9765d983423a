// The interface's types, named for the client: every one is read out of openapi-types.ts, which
// the build generates from the app's own /v1/openapi.json, so a change to the API changes these
// (and fails the compile where the client no longer fits) rather than drifting from them.
import type { operations, paths } from './openapi-types.ts';

type JsonOf<R> = R extends { content: { 'application/json': infer B } } ? B : never;
/** The JSON body an operation answers with status S. */
export type ResponseOf<Op extends keyof operations, S extends number> =
  operations[Op] extends { responses: infer Rs } ? (S extends keyof Rs ? JsonOf<Rs[S]> : never) : never;
/** An operation's JSON request body. */
export type RequestOf<Op extends keyof operations> =
  operations[Op] extends { requestBody?: infer B } ? JsonOf<NonNullable<B>> : never;
/** An operation's query parameters, each optional (the service applies the defaults). */
export type QueryOf<Op extends keyof operations> =
  operations[Op] extends { parameters: { query?: infer Q } } ? Partial<NonNullable<Q>> : never;

export type DecisionRequest = RequestOf<'recordDecision'>;
/** The decision fields of interface 2.2: a decision request without `signature`. */
export type DecisionFields = Omit<DecisionRequest, 'signature'>;
export type Decision = ResponseOf<'recordDecision', 201>;
export type DecisionList = ResponseOf<'listDecisions', 200>;
export type DecisionListItem = ResponseOf<'getDecision', 200>;
export type AssertionRequest = RequestOf<'assertDecision'>;
export type Assertion = ResponseOf<'assertDecision', 200>;
export type SigningKeyRequest = RequestOf<'registerSigningKey'>;
export type SigningKey = ResponseOf<'registerSigningKey', 201>;
export type SigningKeyList = ResponseOf<'listSigningKeys', 200>;
export type AgentProfile = ResponseOf<'getAgent', 200>;
export type ChainQuery = QueryOf<'getChain'>;
export type ChainPage = ResponseOf<'getChain', 200>;
export type ProofBundle = ResponseOf<'getProof', 200>;
export type LedgerQuery = QueryOf<'listLedger'>;
export type LedgerPage = ResponseOf<'listLedger', 200>;
export type Transparency = ResponseOf<'getTransparency', 200>;
export type ErrorBody = ResponseOf<'recordDecision', 400>;

type PerformancePath = '/v1/agents/{handle}/performance';
/**
 * GET /v1/agents/{handle}/performance: typed from the document once the service describes it;
 * until then, whatever JSON object it answers.
 */
export type Performance = paths extends { [K in PerformancePath]: { get: { responses: { 200: infer R } } } }
  ? JsonOf<R> : Record<string, unknown>;
export type PerformanceQuery = paths extends { [K in PerformancePath]: { get: { parameters: { query?: infer Q } } } }
  ? Partial<NonNullable<Q>> : Record<string, string | number | boolean>;

export type { operations, paths } from './openapi-types.ts';
