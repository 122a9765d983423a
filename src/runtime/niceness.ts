// Thread priorities on Linux, where the scheduler weighs each thread by its own niceness: the
// read threads, and the V8 helper threads that collect their garbage, yield the CPU to the
// serving thread (the record path). Elsewhere, or where it is not allowed, nothing changes.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Niceness of work that must never delay a write: the lowest priority there is. */
const BACKGROUND_NICENESS = 19;

/** Node's thread names: from Node 24 on, V8's helpers are named; Node 22 names only the others; Node 20 none. */
const V8_HELPER = 'V8Worker';
const DELAYED_TASK_SCHEDULER = 'DelayedTaskSche';
const NAMED_OTHERS = new Set(['MainThread', DELAYED_TASK_SCHEDULER, 'SignalInspector', 'libuv-worker']);
/** The number of V8's helpers unless `--v8-pool-size` says otherwise. */
const DEFAULT_V8_POOL_SIZE = 4;

export type ThreadName = { tid: number; name: string };

/** Lowers the calling thread's priority; false where it could not. */
export function lowerThisThread(): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && lower(tid);
  } catch {
    return false;
  }
}

/**
 * Lowers the priority of V8's helper threads (concurrent marking, parallel scavenges and
 * compilation, for every isolate of the process): most of their work under heavy reads is the
 * read threads' garbage. The serving thread still collects its own garbage itself when they lag.
 * Returns how many threads were lowered.
 */
export function lowerV8Helpers(): number {
  let threads: ThreadName[];
  try {
    threads = readdirSync('/proc/self/task').map(Number).sort((a, b) => a - b)
      .map((tid) => ({ tid, name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() }));
  } catch {
    return 0;
  }
  return v8HelpersAmong(threads, v8PoolSize()).filter(lower).length;
}

/**
 * V8's helper threads among the process's (sorted by tid, the main thread first): those named so,
 * or else the `poolSize` threads Node starts right after V8's delayed-task scheduler (named from
 * Node 22; on Node 20, the thread after the main one). None when the layout is not that.
 */
export function v8HelpersAmong(threads: ThreadName[], poolSize: number | null): number[] {
  const named = threads.filter((t) => t.name === V8_HELPER);
  if (named.length > 0) return named.map((t) => t.tid);
  if (poolSize === null) return [];
  const scheduler = threads.findIndex((t) => t.name === DELAYED_TASK_SCHEDULER);
  const unnamed = threads.every((t) => t.name === threads[0]!.name);
  const first = scheduler > 0 ? scheduler + 1 : unnamed ? 2 : -1;
  const helpers = first > 0 ? threads.slice(first, first + poolSize) : [];
  const plain = helpers.length === poolSize && helpers.every((t) => t.name === helpers[0]!.name && !NAMED_OTHERS.has(t.name));
  return plain ? helpers.map((t) => t.tid) : [];
}

/** V8's pool size as this process was started with: `--v8-pool-size`, or Node's default; null when Node chose it (0). */
function v8PoolSize(): number | null {
  const flags = [...process.execArgv, ...(process.env.NODE_OPTIONS ?? '').split(/\s+/)];
  const given = flags.map((f) => /^--v8[-_]pool[-_]size=(\d+)$/.exec(f)?.[1]).find((v) => v !== undefined);
  if (given === undefined) return DEFAULT_V8_POOL_SIZE;
  return Number(given) > 0 ? Number(given) : null;
}

function lower(tid: number): boolean {
  try {
    setPriority(tid, BACKGROUND_NICENESS);
    return true;
  } catch {
    return false;
  }
}
