// `ledger verify <source>`: the command around the offline verifier (src/verify/), which owns
// what is checked; this file owns only the command line.
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import type { WitnessPolicy } from '../core/witness-policy.ts';

/** A proof bundle's text when the source is one (file or URL), for its anchor_proof; else null. */
async function proofText(source: string): Promise<string | null> {
  try {
    if (/^https?:\/\//i.test(source)) {
      if (!/\/proof\/[^/]+$/.test(source)) return null;
      const res = await fetch(source);
      return res.status === 200 ? await res.text() : null;
    }
    const text = await readFile(source, 'utf8');
    return text.trimStart().startsWith('{') && text.includes('"object":"proof"') ? text : null;
  } catch {
    return null;
  }
}

export function registerVerifyCommand(program: Command): void {
  program.command('verify <source>')
    .description('Verify an export (file or URL), a chain URL, a proof bundle (file or URL) or the global log (<base_url>/log, or a directory of its tiles) with canon_v1 and log_v1, offline from the service; with --performance, an agent\'s performance reports computed again from their inputs')
    .option('--performance', 'the source is an agent\'s URL (<site>/agents/<handle> or <api>/v1/agents/<handle>): compute its performance reports again from their inputs bundles and compare every figure (exit 1 naming the first that differs)')
    .option('--pin <seq:chain_hash | checkpoint file>', 'a head pinned earlier that must still be in the chain, or a log checkpoint saved earlier that the log must extend (repeatable)', (v: string, all: string[] = []) => [...all, v])
    .option('--seen <proof bundle | /v1/ledger page>', 'a proof bundle or a /v1/ledger page (file or URL) seen before: every record of the agent it shows must be in the chain, unchanged, so a head moved back is caught (repeatable)', (v: string, all: string[] = []) => [...all, v])
    .option('--vkey <vkey | file>', 'the global log\'s verifier key (default: the one the service publishes on /transparency)')
    .option('--header <file>', 'a Bitcoin block header (80 bytes, raw or hex) to check .ots anchors against (repeatable)', (v: string, all: string[] = []) => [...all, v])
    .option('--headers-url <url>', 'an Esplora-style API (/block-height/<h>, /block/<hash>/header) to fetch block headers from for .ots anchors')
    .option('--checkpoint <file>', 'for a .ots source: the checkpoint (signed note) it must timestamp')
    .option('--witness-policy <file>', 'a C2SP tlog-policy file (witness, group and quorum lines): every checkpoint verified must carry valid cosignatures satisfying its quorum')
    .option('--witness <vkey>', 'a witness\'s cosigner vkey (type 0x04) whose cosignatures count (repeatable; with --quorum)', (v: string, all: string[] = []) => [...all, v])
    .option('--quorum <n>', 'how many of the --witness witnesses must have cosigned each checkpoint verified (default: all of them)', (v: string) => {
      if (!/^[0-9]{1,3}$/.test(v)) throw new Error('--quorum must be a whole number');
      return Number(v);
    })
    .option('--workers <n>', 'worker threads (0: verify in the main thread)', (v: string) => {
      if (!/^[0-9]{1,2}$/.test(v)) throw new Error('--workers must be an integer from 0 to 99');
      return Number(v);
    })
    .action(async (source: string, opts: {
      performance?: boolean; pin?: string[]; seen?: string[]; workers?: number; vkey?: string; header?: string[]; headersUrl?: string;
      checkpoint?: string; witnessPolicy?: string; witness?: string[]; quorum?: number;
    }) => {
      // The verifier is loaded when the command runs, so `ledger --help` does not pay for it.
      if (opts.performance) {
        const { verifyPerformance } = await import('../verify/performance.ts');
        process.exitCode = await verifyPerformance(source, (line) => console.log(line));
        return;
      }
      const [{ checkProofAnchor, runAnchorCheck }, { runVerify }, { readWitnessPolicy }] = await Promise.all([
        import('../verify/anchor.ts'), import('../verify/run.ts'), import('../verify/log.ts'),
      ]);
      const anchorOptions = {
        ...(opts.header ? { headers: opts.header } : {}),
        ...(opts.headersUrl ? { headersUrl: opts.headersUrl } : {}),
        ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}),
      };
      const out = (line: string) => console.log(line);
      if (/\.ots$/i.test(source)) {
        process.exitCode = await runAnchorCheck(source, anchorOptions, out);
        return;
      }
      let witnessPolicy: WitnessPolicy | null;
      try {
        witnessPolicy = await readWitnessPolicy({
          ...(opts.witnessPolicy !== undefined ? { file: opts.witnessPolicy } : {}),
          ...(opts.witness ? { witnesses: opts.witness } : {}),
          ...(opts.quorum !== undefined ? { quorum: opts.quorum } : {}),
        });
      } catch (e) {
        out(`verdict: UNUSABLE INPUT: ${(e as Error).message}`);
        process.exitCode = 2;
        return;
      }
      const code = await runVerify(source, {
        witnessPolicy,
        pins: opts.pin ?? [],
        seen: opts.seen ?? [],
        ...(opts.workers !== undefined ? { workers: opts.workers } : {}),
        ...(opts.vkey !== undefined ? { vkey: opts.vkey } : {}),
      }, out);
      const bundle = code === 2 ? null : await proofText(source);
      const anchorCode = bundle ? await checkProofAnchor(bundle, anchorOptions, out) : null;
      process.exitCode = Math.max(code, anchorCode ?? 0);
    });
}
