// The canon_v1 and log_v1 core: lossless JSON, decimals, canonical serialisation, hashing, chains,
// decision content, chain verification, and the global log's Merkle tree, tiles, signed
// checkpoints and tlog-proofs. No I/O; node:crypto only behind sha256.ts and ed25519.ts.

export * from './base64.ts';
export * from './base64url.ts';
export * from './canon.ts';
export * from './chain.ts';
export * from './cosignature.ts';
export * from './decimal.ts';
export * from './decision.ts';
export * from './ed25519.ts';
export * from './json.ts';
export * from './merkle.ts';
export * from './note.ts';
export * from './sha256.ts';
export * from './tiles.ts';
export * from './time.ts';
export * from './tlog-proof.ts';
export * from './verify.ts';
export * from './witness-policy.ts';
