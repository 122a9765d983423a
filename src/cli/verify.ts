// `ledger verify <source>`: the command around the offline verifier (src/verify/), which owns
// what is checked; this file owns only the command line.
import type { Command } from 'commander';
import { runVerify, type VerifyOptions } from '../verify/run.ts';

export function registerVerifyCommand(program: Command): void {
  program.command('verify <source>')
    .description('Verify an export (file or URL), a chain URL or a proof bundle (file or URL) with canon_v1, offline from the service')
    .option('--pin <seq:chain_hash>', 'a head pinned earlier that must still be in the chain (repeatable)', (v: string, all: string[] = []) => [...all, v])
    .option('--workers <n>', 'worker threads (0: verify in the main thread)', (v: string) => {
      if (!/^[0-9]{1,2}$/.test(v)) throw new Error('--workers must be an integer from 0 to 99');
      return Number(v);
    })
    .action(async (source: string, opts: { pin?: string[]; workers?: number }) => {
      const code = await runVerify(source, { pins: opts.pin ?? [], ...(opts.workers !== undefined ? { workers: opts.workers } : {}) }, (line) => console.log(line));
      process.exitCode = code;
    });
}
