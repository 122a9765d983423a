// Runs verifyChunk on worker threads (worker.ts), results in submission order.
import { availableParallelism } from 'node:os';
import type { Worker } from 'node:worker_threads';
import { siblingModule, startWorker } from '../runtime/worker.ts';
import type { ChunkResult } from './records.ts';
import type { ChunkRunner } from './walk.ts';

export function defaultWorkerCount(): number {
  return Math.min(4, availableParallelism());
}

export function workerPool(size: number): ChunkRunner {
  const entry = siblingModule('worker', import.meta.url);
  const pending = new Map<number, { resolve: (r: ChunkResult) => void; reject: (e: unknown) => void }>();
  const workers: Worker[] = [];
  for (let i = 0; i < size; i++) {
    const worker = startWorker(entry);
    worker.on('message', (m: { id: number; result: ChunkResult }) => {
      const p = pending.get(m.id);
      pending.delete(m.id);
      p?.resolve(m.result);
    });
    worker.on('error', (err) => {
      for (const p of pending.values()) p.reject(err);
      pending.clear();
    });
    workers.push(worker);
  }
  let next = 0;
  return {
    run(input) {
      const id = next++;
      return new Promise((resolve, reject) => {
        pending.set(id, { resolve, reject });
        const bytes = input.bytes;
        // A block that owns its whole buffer moves to the worker instead of being copied.
        const transfer = bytes && bytes.byteOffset === 0 && bytes.byteLength === bytes.buffer.byteLength ? [bytes.buffer as ArrayBuffer] : [];
        workers[id % size]!.postMessage({ id, input }, transfer);
      });
    },
    async close() {
      await Promise.all(workers.map((w) => w.terminate()));
    },
  };
}
