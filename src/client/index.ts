// The client wing: `decision-ledger/client`, a TypeScript client of the ledger's HTTP interface for
// Node 20+ and browsers (global fetch; WebCrypto for randomness and signing). It owns typed calls
// (types generated from the app's /v1/openapi.json at build time), recording a decision exactly
// once across retries, signing decisions locally with the shared core, verifying proofs, chains
// and exports with the verifier's pure modules, and typed errors carrying the spec's codes.
// In a browser bundle, package.json's `browser` map swaps the core's two node:crypto seams for
// browser/sha256.ts and browser/ed25519.ts.

export { LedgerClient, type ClientOptions, type RecordOptions, type Recorded } from './client.ts';
export { LedgerApiError, LedgerError, LedgerNetworkError, LedgerValidationError, type LedgerErrorFields } from './errors.ts';
export { DEFAULT_RETRY, normaliseBaseUrl, type RetryPolicy, type TransportOptions } from './http.ts';
export {
  decisionPayload, generateSigningKey, publicKeyOf, randomId, secretKeyFromText, secretKeyToText, signDecision,
  type DecisionPayload, type Signer, type SigningKeyPair,
} from './signing.ts';
export { verifyDocument, verifyExportData, verifyUrl, type Failure, type Verification, type VerifiedCheck, type VerifyOptions } from './verify.ts';
export type * from './types.ts';
