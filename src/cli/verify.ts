// `ledger verify <source>`: the command around the offline verifier (src/verify/), which owns
// what is checked; this file owns only the command line.
import type { Command } from 'commander';
import { runVerify, type VerifyOptions } from '../verify/run.ts';

export function registerVerifyCommand(program: Command): void {
  program.command('verify <source>')
    .description('Verify an export (file or URL), a chain URL, a proof bundle (file or URL) or the global log (<base_url>/log, or a directory of its tiles) with canon_v1 and log_v1, offline from the service')
    .option('--pin <seq:chain_hash | checkpoint file>', 'a head pinned earlier that must still be in the chain, or a log checkpoint saved earlier that the log must extend (repeatable)', (v: string, all: string[] = []) => [...all, v])
    .option('--vkey <vkey | file>', 'the global log\'s verifier key (default: the one the service publishes on /transparency)')
    .option('--workers <n>', 'worker threads (0: verify in the main thread)', (v: string) => {
      if (!/^[0-9]{1,2}$/.test(v)) throw new Error('--workers must be an integer from 0 to 99');
      return Number(v);
    })
    .action(async (source: string, opts: { pin?: string[]; workers?: number; vkey?: string }) => {
      const code = await runVerify(source, {
        pins: opts.pin ?? [],
        ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
        ...(opts.vkey !== undefined ? { vkey: opts.vkey } : {}),
      }, (line) => console.log(line));
      process.exitCode = code;
    });
}
