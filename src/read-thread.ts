// A read thread (read-threads.ts): the service's app, composed over a connection of its own to the
// store, answering the public reads the serving thread hands it (api/read-handoff.ts). It starts
// no job and takes no write request; it writes only what a read keeps (a performance report
// brought up to date), as any node does. Its answers go back in chunks, at most WINDOW ahead of
// what the serving thread's socket took.
import { parentPort, workerData } from 'node:worker_threads';
import type { Config } from './config.ts';
import { lowerThisThread } from './runtime/niceness.ts';
import { readPacer, SharedPacing } from './runtime/loop-share.ts';
import { WINDOW, type FromReadThread, type ReadThreadData, type ToReadThread } from './read-threads.ts';
import type { HandedRead } from './api/read-handoff.ts';

const port = parentPort!;
const post = (message: FromReadThread, transfer: ArrayBuffer[] = []) => port.postMessage(message, transfer);

/** The serving thread admitted the read (rate limit, gate): here it only runs, paced as it would be there. */
function readThreadConfig(config: Config): Config {
  return {
    ...config,
    redisUrl: null,
    adminToken: null,
    metrics: { ...config.metrics, enabled: false, port: null },
    readBounds: { ...config.readBounds, concurrency: 1024, perClient: 1024, queue: 0, waitMs: 0, cacheBytes: 0 },
  };
}

/**
 * The app's modules, loaded only once this thread has lowered itself: loading them is about half
 * of a thread's start, which would otherwise take the CPU at the process's priority.
 */
async function appModules() {
  const [{ buildApp }, { loggerOptions }, { compose }, { loadWitnessPolicy }, { openForReads, openReadReplica }] = await Promise.all([
    import('./api/app.ts'), import('./api/logging.ts'), import('./compose.ts'), import('./log/service.ts'), import('./store/open.ts'),
  ]);
  return { buildApp, loggerOptions, compose, loadWitnessPolicy, openForReads, openReadReplica };
}

async function open(data: ReadThreadData) {
  const { buildApp, loggerOptions, compose, loadWitnessPolicy, openForReads, openReadReplica } = await appModules();
  const config = readThreadConfig(data.config);
  readPacer.join(new SharedPacing(data.pacing));
  const store = await openForReads(config.databaseUrl, { readPoolSize: config.readBounds.poolSize, poolSize: 2 });
  const readReplica = config.readDatabaseUrl ? openReadReplica(config.readDatabaseUrl, { readPoolSize: config.readBounds.poolSize }) : null;
  const witnessPolicy = config.witnessPolicyFile ? await loadWitnessPolicy(config.witnessPolicyFile) : null;
  const refuse = () => Promise.reject(new Error('a read thread records nothing'));
  const parts = compose({ store, config, checkSignature: refuse, readReplica, logVkey: data.logVkey ?? undefined, witnessPolicy });
  const ledger = await buildApp(parts, { logger: loggerOptions(config.logLevel), readThread: true });
  const close = async () => {
    await ledger.close();
    await readReplica?.close();
    await store.close();
  };
  return { ledger, close };
}

/** A read being answered: `hangUp` ends it as a client's closed connection would, once it has begun. */
type Answering = { cancelled: boolean; ahead: number; wake: (() => void) | null; hangUp: () => void };
const answering = new Map<number, Answering>();

/** The chunk itself when it owns its memory, else a copy, so it can be transferred (small chunks are views into a shared pool). */
function owned(chunk: Buffer): Uint8Array {
  return chunk.byteOffset === 0 && chunk.byteLength === chunk.buffer.byteLength ? chunk : new Uint8Array(chunk);
}

async function answer(app: Awaited<ReturnType<typeof open>>['ledger']['app'], id: number, read: HandedRead): Promise<void> {
  const state: Answering = { cancelled: false, ahead: 0, wake: null, hangUp: () => undefined };
  answering.set(id, state);
  try {
    const res = await app.inject({ method: read.method, url: read.url, headers: read.headers, remoteAddress: read.ip, payloadAsStream: true });
    const body = res.stream();
    state.hangUp = () => {
      (res.raw.res as { destroy: () => void }).destroy();
      body.destroy();
    };
    if (state.cancelled) return state.hangUp();
    post({ kind: 'head', id, status: res.statusCode, headers: res.headers });
    for await (const chunk of body) {
      if (state.cancelled) break;
      const bytes = owned(chunk as Buffer);
      post({ kind: 'chunk', id, bytes }, [bytes.buffer as ArrayBuffer]);
      if (++state.ahead >= WINDOW) await new Promise<void>((wake) => (state.wake = wake));
    }
    if (!state.cancelled) post({ kind: 'end', id });
  } catch (err) {
    if (!state.cancelled) post({ kind: 'fail', id, message: (err as Error).message });
  } finally {
    answering.delete(id);
  }
}

function wake(state: Answering): void {
  const w = state.wake;
  state.wake = null;
  w?.();
}

lowerThisThread(); // Linux schedules threads one by one: this one, not the process, yields to the serving thread (from before the app's modules load)
const opened = await open(workerData as ReadThreadData).catch((err: Error) => {
  post({ kind: 'log', level: 'error', message: `could not start: ${err.message}` });
  process.exit(1);
});
port.on('message', (m: ToReadThread) => {
  if (m.kind === 'read') return void answer(opened.ledger.app, m.id, m.read);
  if (m.kind === 'close') return void opened.close().finally(() => process.exit(0));
  const state = answering.get(m.id);
  if (!state) return;
  if (m.kind === 'taken') {
    state.ahead--;
    if (state.ahead < WINDOW) wake(state);
  } else {
    state.cancelled = true;
    state.hangUp();
    wake(state);
  }
});
post({ kind: 'ready' });
