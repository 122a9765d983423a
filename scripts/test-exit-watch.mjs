// Preloaded into every test file's process by `npm test` (scripts/test-run.mjs, --import): once the
// file's tests and after hooks are done, a process still alive GRACE_MS later prints what keeps it
// alive (process.getActiveResourcesInfo(), and each ref'd handle with the stack that created it)
// and exits with code 1, naming the file, so that a hang says its cause in the log. Without it,
// node's runner stops such a file only at --test-timeout (Node 20) or never (Node 22 and later).
//
// Creation sites are recorded by wrapping what makes the handles that hold a process open: timers,
// client sockets, servers, child processes and worker threads. Not through async_hooks: an init
// hook makes node hook every promise too (awaits 2.5 times slower, 10 times with a destroy hook).
import childProcess from 'node:child_process';
import { appendFileSync, mkdirSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import net from 'node:net';
import { relative } from 'node:path';
import timers from 'node:timers';
import { promisify } from 'node:util';
import workerThreads from 'node:worker_threads';

const GRACE_MS = Number(process.env.LEDGER_TEST_EXIT_GRACE_MS || 10_000);
/**
 * An after hook's bound unless it sets its own: a teardown that hangs (a pool that never ends, a
 * child never reaped) fails by name, and the file's watch then reports what is left, well within
 * the file's 240 s (--test-timeout, test-run.mjs); no teardown of the suite takes a minute.
 */
const AFTER_HOOK_TIMEOUT_MS = Number(process.env.LEDGER_TEST_AFTER_HOOK_TIMEOUT_MS || 120_000);
/** Where a file that did not exit is noted (a line per file) for test-run.mjs's closing summary. */
const LINGER_DIR = process.env.LEDGER_TEST_LINGER_DIR;
const STACK_FRAMES = 12;

// Only a test file's own process: not node's runner (no NODE_TEST_CONTEXT), nor a worker thread, nor
// a child a test starts with this process's flags (its script is no *.test.* file).
const testFile = process.argv[1] ?? '';
if (workerThreads.isMainThread && process.env.NODE_TEST_CONTEXT && /\.test\.[cm]?[jt]s$/.test(testFile)) await watchExit();

async function watchExit() {
  recordCreationSites();
  const activity = countRunningHooks();
  const { after, afterEach, beforeEach } = await import('node:test');
  // Each test counts as running too: a file that awaits between its tests (a service check before
  // a suite) gets tests and hooks registered after the root's after hook has run, and they run later.
  beforeEach(() => {
    activity.running++;
  });
  afterEach(() => {
    activity.running--;
    activity.endedAt = Date.now();
  });
  // The root's first after hook: it runs once every test registered so far has finished, before
  // the file's own root-level after hooks (counted in activity: the grace starts when they, and
  // any test or hook that runs later, are done).
  after(() => {
    activity.endedAt = Date.now();
    const check = () => {
      const wait = activity.running > 0 ? GRACE_MS : activity.endedAt + GRACE_MS - Date.now();
      if (wait > 0) timers.setTimeout(check, wait).unref();
      else reportAndExit();
    };
    check();
  });
}

/** Creation stacks by handle owner (a Socket, a Server, a ChildProcess, a Worker, a Timeout). */
const sites = new WeakMap();
/**
 * Timers with a creation site: every interval, and the timeouts of LONG_TIMEOUT_MS or more (a
 * short one left behind shows as a Timeout in getActiveResourcesInfo(), without its site). The
 * thousands of short timeouts a file makes (pollers, retries) are not recorded: a stack each
 * cost the suite measurably. Those done are swept out now and then.
 */
const LONG_TIMEOUT_MS = 1_000;
const timeouts = new Set();
let sweepAt = 1_000;
/** Worker threads running and ref'd. */
const workers = new Set();

function creationSite() {
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = STACK_FRAMES;
  const site = {};
  Error.captureStackTrace(site, creationSite); // formatted only if read, at a report
  Error.stackTraceLimit = limit;
  return site;
}

function recordCreationSites() {
  for (const name of ['setTimeout', 'setInterval']) {
    const make = timers[name];
    const recorded = function (...args) {
      const timeout = make.apply(this, args);
      if (name === 'setInterval' || timeout._idleTimeout >= LONG_TIMEOUT_MS) {
        sites.set(timeout, creationSite());
        rememberTimeout(timeout);
      }
      return timeout;
    };
    if (make[promisify.custom]) recorded[promisify.custom] = make[promisify.custom];
    timers[name] = recorded;
    globalThis[name] = recorded;
  }
  recordOn(net.Socket.prototype, 'connect');
  recordOn(net.Server.prototype, 'listen');
  recordOn(childProcess.ChildProcess.prototype, 'spawn');
  // A worker thread is no handle of process._getActiveHandles(): running and ref'd ones are kept here.
  workerThreads.Worker = class Worker extends workerThreads.Worker {
    constructor(...args) {
      super(...args);
      sites.set(this, creationSite());
      workers.add(this);
      this.once('exit', () => workers.delete(this));
    }

    ref() {
      super.ref();
      if (this.threadId >= 0) workers.add(this);
    }

    unref() {
      super.unref();
      workers.delete(this);
    }
  };
  syncBuiltinESMExports();
}

function rememberTimeout(timeout) {
  timeouts.add(timeout);
  if (timeouts.size < sweepAt) return;
  for (const t of timeouts) if (t._destroyed) timeouts.delete(t);
  sweepAt = Math.max(1_000, timeouts.size * 2);
}

/** Wraps `proto[method]` to note the first call's stack on the object (a socket may connect again). */
function recordOn(proto, method) {
  const original = proto[method];
  proto[method] = function (...args) {
    if (!sites.has(this)) sites.set(this, creationSite());
    return original.apply(this, args);
  };
}

/**
 * node:test's `after` and `before`, wrapped so that the hooks running now are counted, the last
 * one's end noted, and each after hook bounded (a test file's named import sees the wrappers:
 * syncBuiltinESMExports). The bound is kept here rather than left to node's hook timeout, which
 * fails the hook but cannot end its promise: the count would never come down. A hook taking a
 * `done` callback gets node's timeout. A before hook (a fixture built) is bounded by the file's own.
 */
function countRunningHooks() {
  const activity = { running: 0, endedAt: 0 };
  const nodeTest = createRequire(import.meta.url)('node:test');
  const { after, before } = nodeTest;
  const counted = (fn, timeoutMs) => async function countedHook(context) {
    activity.running++;
    let timer;
    const bound = new Promise((_, reject) => {
      if (timeoutMs !== null) timer = timers.setTimeout(() => reject(new Error(`this after hook did not end within ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      return await Promise.race([fn.call(this, context), bound]);
    } finally {
      timers.clearTimeout(timer);
      activity.running--;
      activity.endedAt = Date.now();
    }
  };
  nodeTest.after = (fn, options = {}) => {
    const timeout = options.timeout ?? AFTER_HOOK_TIMEOUT_MS;
    if (typeof fn !== 'function' || fn.length > 1) return after(fn, { ...options, timeout });
    return after(counted(fn, timeout), options);
  };
  nodeTest.before = (fn, options = {}) => (typeof fn !== 'function' || fn.length > 1 ? before(fn, options) : before(counted(fn, null), options));
  syncBuiltinESMExports();
  return activity;
}

function reportAndExit() {
  const file = relative(process.cwd(), testFile);
  const stdio = [process.stdout, process.stderr];
  const handles = process._getActiveHandles().filter((h) => !stdio.includes(h) && holds(h));
  const liveTimeouts = [...timeouts].filter((t) => !t._destroyed && t.hasRef());
  const lines = [
    `test-exit-watch: ${file} is still alive ${GRACE_MS / 1000} s after its tests and hooks ended; what keeps it alive:`,
    `  active resources (process.getActiveResourcesInfo()): ${countedNames(process.getActiveResourcesInfo())}`,
    ...[...handles, ...workers, ...liveTimeouts].flatMap((h) => [`  ${describe(h, handles)}`, ...frames(sites.get(h) ?? sites.get(parentOf(h, handles)))]),
    `test-exit-watch: ${file} did not exit; stopped with code 1`,
  ];
  process.stderr.write(`${lines.join('\n')}\n`);
  if (LINGER_DIR) {
    mkdirSync(LINGER_DIR, { recursive: true });
    appendFileSync(`${LINGER_DIR}/files`, `${file}\n`);
  }
  process.exit(1);
}

/** Whether a handle holds the event loop now (ref'd and open). */
function holds(handle) {
  if (typeof handle.hasRef === 'function') return handle.hasRef();
  return handle._handle?.hasRef?.() ?? true;
}

/** The child process whose stdio pipe `socket` is, if any. */
function parentOf(socket, handles) {
  return handles.find((h) => h instanceof childProcess.ChildProcess && h.stdio?.includes(socket));
}

function countedNames(names) {
  const counts = new Map();
  for (const name of names) counts.set(name, (counts.get(name) ?? 0) + 1);
  return [...counts].map(([name, n]) => (n > 1 ? `${name} x${n}` : name)).join(', ') || 'none';
}

/** What the handle is and what names it: a timer's period, a socket's ends, a child's command. */
function describe(handle, handles) {
  if (timeouts.has(handle)) return `${handle._repeat ? 'setInterval' : 'setTimeout'} (${handle._idleTimeout} ms), created`;
  if (workers.has(handle)) return `worker thread ${handle.threadId}, started`;
  if (handle instanceof childProcess.ChildProcess) return `child process ${handle.pid} (${handle.spawnargs.join(' ').slice(0, 200)}), started`;
  if (handle instanceof net.Server) return `server listening on ${JSON.stringify(handle.address())}, listening since`;
  if (handle instanceof net.Socket) {
    const parent = parentOf(handle, handles);
    if (parent) return `a stdio pipe of child process ${parent.pid}, started`;
    const ends = handle.remotePort ? `${handle.localAddress}:${handle.localPort} -> ${handle.remoteAddress}:${handle.remotePort}` : 'not connected';
    return `socket ${ends}, ${sites.has(handle) ? 'connected' : 'accepted by a server here, or made'}`;
  }
  return `${handle.constructor?.name ?? 'handle'}, created`;
}

/** The creation stack without node's own frames and this file's. */
function frames(site) {
  if (!site) return ['    at (no creation site recorded)'];
  const all = site.stack.split('\n').slice(1);
  const own = all.filter((line) => !line.includes('node:internal/') && !line.includes('test-exit-watch.mjs'));
  return (own.length > 0 ? own : all).slice(0, 10).map((line) => `    ${line.trim()}`);
}
