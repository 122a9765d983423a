// What a child process printed, once it has ended. A child's 'exit' can come before the last of
// its stdout and stderr has been read; 'close' comes after both, so that is what is waited for.
import type { ChildProcess } from 'node:child_process';

export type ChildOutput = { code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string };

/** Collects `child`'s stdout and stderr (both piped) and resolves when both are closed. */
export function outputOf(child: ChildProcess): Promise<ChildOutput> {
  let stdout = '';
  let stderr = '';
  child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
  return new Promise((resolve) => child.once('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}
