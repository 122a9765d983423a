// A read thread (src/read-thread.ts) that starts, then stops at its first read: what the serving
// thread must survive without losing the read.
import { parentPort } from 'node:worker_threads';
import type { ToReadThread } from '../../src/read-threads.ts';

const port = parentPort!;
port.on('message', (m: ToReadThread) => {
  if (m.kind === 'read') process.exit(3);
  if (m.kind === 'close') process.exit(0);
});
port.postMessage({ kind: 'ready' });
