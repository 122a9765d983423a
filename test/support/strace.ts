// The service under strace (Debian's package), for tests that check from outside the process in
// which order it did things: `strace -f -ttt -T -yy` records every thread's chosen system calls
// with their start time, their duration and their file descriptors resolved to paths and TCP
// endpoints; parseTrace() turns that file into calls with start and end times.
//
// strace does not end its tracee when it is itself terminated, so the service is stopped through
// its own pid (the tracer's only child), never through strace's.
import { readFileSync } from 'node:fs';
import { LedgerNode } from './ledger-node.ts';

export type Syscall = {
  pid: number;
  name: string;
  /** The file descriptor's resolution: a path, or `TCP:[local->remote]` for a socket. */
  fd: number;
  target: string;
  /** The arguments as strace printed them (data buffers included, escaped). */
  args: string;
  result: number;
  /** Seconds since the epoch. */
  start: number;
  end: number;
};

export const TRACED_CALLS = ['read', 'recvfrom', 'write', 'writev', 'sendto', 'sendmsg', 'pwrite64', 'pwritev', 'fsync', 'fdatasync'];

/** strace's command line for the service: every thread, wall-clock microseconds, durations, fds resolved, long buffers. */
export function straceWrapper(outputFile: string): string[] {
  return ['strace', '-f', '-ttt', '-T', '-yy', '-s', '1048576', '-e', `trace=${TRACED_CALLS.join(',')}`, '-o', outputFile];
}

/** The pid of the traced service (strace's child), once it has started. */
export function tracedPid(node: LedgerNode): number {
  const children = readFileSync(`/proc/${node.pid}/task/${node.pid}/children`, 'utf8').trim().split(/\s+/).map(Number);
  if (children.length !== 1 || !Number.isInteger(children[0])) throw new Error(`strace (pid ${node.pid}) has children ${children.join(', ')}`);
  return children[0]!;
}

/** Stops the traced service (SIGTERM, then SIGKILL after `graceMs`) and waits for strace to exit with it. */
export async function stopTraced(node: LedgerNode, servicePid: number, graceMs = 15_000): Promise<void> {
  if (!node.running) return;
  try {
    process.kill(servicePid, 'SIGTERM');
  } catch {
    // already gone
  }
  const deadline = Date.now() + graceMs;
  while (node.running && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 50));
  if (node.running) {
    try {
      process.kill(servicePid, 'SIGKILL');
    } catch {
      // already gone
    }
    await node.kill();
  }
}

const FD = /^(\d+)<((?:TCP|TCPv6|UDP|UDPv6|UNIX):\[[^\]]*\]|[^>]*)>/;
const END = / = (-?\d+)(?: [A-Z]\w* \([^)]*\))? <([\d.]+)>$/;
const LINE = /^(\d+) +(\d+\.\d+) (.*)$/;

/** The calls in an strace output file; a call split by another thread's (`<unfinished ...>`, `<... resumed>`) is joined. */
export function parseTrace(file: string): Syscall[] {
  const calls: Syscall[] = [];
  const unfinished = new Map<number, { start: number; text: string }>();
  for (const line of readFileSync(file, 'utf8').split('\n')) {
    const m = LINE.exec(line);
    if (!m) continue;
    const pid = Number(m[1]);
    const at = Number(m[2]);
    let text = m[3]!;
    let start = at;
    if (text.endsWith(' <unfinished ...>')) {
      unfinished.set(pid, { start: at, text: text.slice(0, -' <unfinished ...>'.length) });
      continue;
    }
    const resumed = /^<\.\.\. (\w+) resumed>(.*)$/.exec(text);
    if (resumed) {
      const begun = unfinished.get(pid);
      unfinished.delete(pid);
      if (!begun) continue;
      start = begun.start;
      text = begun.text + resumed[2];
    }
    const call = parseCall(pid, start, text);
    if (call) calls.push(call);
  }
  return calls.sort((a, b) => a.start - b.start);
}

function parseCall(pid: number, start: number, text: string): Syscall | null {
  const open = text.indexOf('(');
  const end = END.exec(text);
  if (open < 0 || !end) return null;
  const name = text.slice(0, open);
  const args = text.slice(open + 1, end.index);
  const fd = FD.exec(args);
  if (!fd) return null;
  return { pid, name, fd: Number(fd[1]), target: fd[2]!, args, result: Number(end[1]), start, end: start + Number(end[2]) };
}

/** The bytes of a call's first quoted argument (a write's buffer), decoded from strace's C escapes. */
export function bufferOf(call: Syscall): Buffer {
  const open = call.args.indexOf('"');
  const bytes: number[] = [];
  const named: Record<string, number> = { n: 10, r: 13, t: 9, v: 11, f: 12, '"': 34, '\\': 92 };
  for (let i = open + 1; i < call.args.length && call.args[i] !== '"'; i++) {
    const c = call.args[i]!;
    if (c !== '\\') {
      bytes.push(c.charCodeAt(0));
      continue;
    }
    const octal = /^[0-7]{1,3}/.exec(call.args.slice(i + 1, i + 4));
    if (octal) {
      bytes.push(parseInt(octal[0], 8));
      i += octal[0].length;
    } else {
      bytes.push(named[call.args[i + 1]!] ?? call.args.charCodeAt(i + 1));
      i++;
    }
  }
  return Buffer.from(bytes);
}

/**
 * When the SQLite WAL transaction that wrote `page` (a frame's page) committed: the end of the
 * write of its commit frame's page. SQLite writes each frame as a 24-byte header (the page number,
 * then the database's size in pages on a transaction's last frame and 0 on the others) followed by
 * the page, one thread writing the whole transaction.
 */
export function walCommitEnd(calls: Syscall[], page: Syscall): number {
  const writes = calls.filter((c) => c.pid === page.pid && c.target === page.target && c.name === page.name);
  const header = writes.indexOf(page) - 1; // the page's own frame may be the commit frame
  if (header < 0) throw new Error(`the WAL write at ${page.start} has no frame header before it`);
  const commitHeader = writes.findIndex((c, i) => i >= header && c.result === 24 && bufferOf(c).readUInt32BE(4) !== 0);
  const commitPage = writes[commitHeader + 1];
  if (commitHeader < 0 || !commitPage) throw new Error(`no commit frame after the WAL write at ${page.start}`);
  return commitPage.end;
}
