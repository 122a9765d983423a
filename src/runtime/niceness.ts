// Thread priorities on Linux, where the scheduler weighs each thread by its own niceness: the
// read threads, and the V8 helper threads that collect their garbage, yield the CPU to the
// serving thread (the record path). Elsewhere, or where it is not allowed, nothing changes.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { setPriority } from 'node:os';

/** Niceness of work that must never delay a write: the lowest priority there is. */
export const BACKGROUND_NICENESS = 19;

/** Node 20 names no thread; from Node 22 on, V8's helpers are named so. */
const V8_HELPER_NAME = 'V8Worker';
/** Node 20's layout: the main thread, V8's delayed-task scheduler, then its helpers (4 unless --v8-pool-size). */
const NODE20_HELPERS = { first: 2, count: 4 };

/** Lowers the calling thread's priority; false where it could not. */
export function lowerThisThread(niceness = BACKGROUND_NICENESS): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
    return Number.isInteger(tid) && lower(tid, niceness);
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
export function lowerV8Helpers(niceness = BACKGROUND_NICENESS): number {
  let threads: { tid: number; name: string }[];
  try {
    threads = readdirSync('/proc/self/task').map(Number).sort((a, b) => a - b)
      .map((tid) => ({ tid, name: readFileSync(`/proc/self/task/${tid}/comm`, 'utf8').trim() }));
  } catch {
    return 0;
  }
  return helpersOf(threads).filter((tid) => lower(tid, niceness)).length;
}

function helpersOf(threads: { tid: number; name: string }[]): number[] {
  const named = threads.filter((t) => t.name === V8_HELPER_NAME);
  if (named.length > 0) return named.map((t) => t.tid);
  const unnamed = threads.every((t) => t.name === threads[0]?.name);
  const poolSized = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((a) => a.includes('v8-pool-size'));
  if (!unnamed || poolSized || !process.versions.node.startsWith('20.')) return [];
  return threads.slice(NODE20_HELPERS.first, NODE20_HELPERS.first + NODE20_HELPERS.count).map((t) => t.tid);
}

function lower(tid: number, niceness: number): boolean {
  try {
    setPriority(tid, niceness);
    return true;
  } catch {
    return false;
  }
}
