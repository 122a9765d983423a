// The canon_v1 core: lossless JSON, decimals, canonical serialisation, hashing, chains,
// decision content and chain verification. No I/O; node:crypto only behind sha256.ts.

export * from './base64url.ts';
export * from './canon.ts';
export * from './chain.ts';
export * from './decimal.ts';
export * from './decision.ts';
export * from './json.ts';
export * from './sha256.ts';
export * from './time.ts';
export * from './verify.ts';
