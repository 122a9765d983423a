// A verify worker: verifies chunks of records (records.ts) off the main thread, so an
// export of a million records uses every core. Started by pool.ts.
import { parentPort } from 'node:worker_threads';
import { verifyChunk, type ChunkInput } from './records.ts';

parentPort!.on('message', (message: { id: number; input: ChunkInput }) => {
  parentPort!.postMessage({ id: message.id, result: verifyChunk(message.input) });
});
