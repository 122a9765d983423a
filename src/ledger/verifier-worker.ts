// The verifier thread's side (verifier-thread.ts): verifies each packed batch it is sent and
// answers with one result byte per job, in order. It runs at the lowest scheduling priority, so
// it uses the CPU the event loop leaves over and never takes a core from the thread that answers
// requests (the verifier thread falls back to the event loop if this thread is starved). Linux
// keeps a nice value per thread; elsewhere setPriority would lower the whole process, so it is
// left alone there.
import { constants, setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { verifyRaw } from '../core/ed25519.ts';
import { unpackJobs } from './verify-batch.ts';

export type VerifyBatch = { first: number; bytes: Uint8Array };
export type VerifyAnswer = { first: number; results: Uint8Array };

if (process.platform === 'linux') {
  try {
    setPriority(0, constants.priority.PRIORITY_LOW); // nice 19; pid 0: the calling thread
  } catch {
    // a sandbox may forbid it; the thread then runs at the normal priority
  }
}

parentPort?.on('message', ({ first, bytes }: VerifyBatch) => {
  const jobs = unpackJobs(bytes);
  const results = new Uint8Array(jobs.length);
  jobs.forEach(({ publicKey, message, signature }, i) => {
    results[i] = verifyRaw(publicKey, message, signature) ? 1 : 0;
  });
  parentPort!.postMessage({ first, results } satisfies VerifyAnswer, [results.buffer]);
});
parentPort?.postMessage('ready');
