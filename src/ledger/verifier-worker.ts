// The verifier thread's side (verifier-thread.ts): verifies each packed batch it is sent and
// answers with one result byte per job, in order. (It once ran at nice 19; the gain measured
// within noise, see bench/history/write.md, so it runs at the normal priority.)
import { parentPort } from 'node:worker_threads';
import { verifyRaw } from '../core/ed25519.ts';
import { unpackJobs } from './verify-batch.ts';

export type VerifyBatch = { first: number; bytes: Uint8Array };
export type VerifyAnswer = { first: number; results: Uint8Array };

parentPort?.on('message', ({ first, bytes }: VerifyBatch) => {
  const jobs = unpackJobs(bytes);
  const results = new Uint8Array(jobs.length);
  jobs.forEach(({ publicKey, message, signature }, i) => {
    results[i] = verifyRaw(publicKey, message, signature) ? 1 : 0;
  });
  parentPort!.postMessage({ first, results } satisfies VerifyAnswer, [results.buffer]);
});
parentPort?.postMessage('ready');
