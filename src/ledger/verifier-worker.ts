// The verifier thread's side (verifier-thread.ts): verifies each batch of jobs it is sent and
// answers with one result byte per job, in order.
import { parentPort } from 'node:worker_threads';
import { verifyRaw } from './ed25519.ts';

export type VerifyJob = [publicKey: Uint8Array, message: string, signature: Uint8Array];
export type VerifyBatch = { first: number; jobs: VerifyJob[] };
export type VerifyAnswer = { first: number; results: Uint8Array };

parentPort?.on('message', ({ first, jobs }: VerifyBatch) => {
  const results = new Uint8Array(jobs.length);
  jobs.forEach(([publicKey, message, signature], i) => {
    results[i] = verifyRaw(publicKey, Buffer.from(message, 'utf8'), signature) ? 1 : 0;
  });
  parentPort!.postMessage({ first, results } satisfies VerifyAnswer);
});
parentPort?.postMessage('ready');
