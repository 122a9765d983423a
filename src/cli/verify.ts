// `ledger verify <source>`: the command around the offline verifier (src/verify/), which owns
// what is checked; this file owns only the command line.
import type { Command } from 'commander';
import { readFile } from 'node:fs/promises';
import type { WitnessPolicy } from '../core/witness-policy.ts';
import { DEFAULT_BOUNDS, boundedFetch, showBytes, type VerifyBounds } from '../verify/bounds.ts';

/** A proof bundle's text when the source is one (file or URL), for its anchor_proof; else null. */
async function proofText(source: string, fetcher: typeof fetch): Promise<string | null> {
  try {
    if (/^https?:\/\//i.test(source)) {
      if (!/\/proof\/[^/]+$/.test(source)) return null;
      const res = await fetcher(source);
      return res.status === 200 ? await res.text() : null;
    }
    const text = await readFile(source, 'utf8');
    return text.trimStart().startsWith('{') && text.includes('"object":"proof"') ? text : null;
  } catch {
    return null;
  }
}

type BoundOptions = { timeout?: number; idleTimeout?: number; maxBytes?: number; maxJsonBytes?: number };

function boundsOf(opts: BoundOptions): VerifyBounds {
  return {
    timeoutMs: opts.timeout !== undefined ? opts.timeout * 1000 : DEFAULT_BOUNDS.timeoutMs,
    idleMs: opts.idleTimeout !== undefined ? opts.idleTimeout * 1000 : DEFAULT_BOUNDS.idleMs,
    maxBytes: opts.maxBytes ?? DEFAULT_BOUNDS.maxBytes,
    maxJsonBytes: opts.maxJsonBytes ?? DEFAULT_BOUNDS.maxJsonBytes,
  };
}

const positive = (name: string, max: number) => (v: string) => {
  const n = Number(v);
  if (!/^[0-9]+(\.[0-9]+)?$/.test(v) || n <= 0 || n > max) throw new Error(`${name} must be a number above 0, at most ${max}`);
  return n;
};

/** A byte count: a whole number, or with a unit (64MiB, 2GiB). */
const byteCount = (name: string) => (v: string) => {
  const m = /^([0-9]{1,12})(KiB|MiB|GiB)?$/.exec(v);
  const n = m ? Number(m[1]) * (m[2] === 'GiB' ? 1024 ** 3 : m[2] === 'MiB' ? 1024 ** 2 : m[2] === 'KiB' ? 1024 : 1) : 0;
  if (n <= 0 || !Number.isSafeInteger(n)) throw new Error(`${name} must be a byte count above 0, e.g. 1048576, 64MiB or 2GiB`);
  return n;
};

export function registerVerifyCommand(program: Command): void {
  program.command('verify <source>')
    .description('Verify an export (file or URL), a chain URL, a proof bundle (file or URL) or the global log (<base_url>/log, or a directory of its tiles) with canon_v1 and log_v1, offline from the service; with --performance, an agent\'s performance reports computed again from their inputs')
    .option('--performance', 'the source is an agent\'s URL (<site>/agents/<handle> or <api>/v1/agents/<handle>): check that its performance reports\' inputs are the agent\'s own (labels; each record against its chain through the report\'s through_seq, and the chain against the global log), then compute the reports again from them and compare every figure (exit 1 naming the first record or figure that differs)')
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
    .option('--timeout <seconds>', `the whole run against a server: past it, exit 2 (default ${DEFAULT_BOUNDS.timeoutMs / 1000})`, positive('--timeout', 86_400))
    .option('--idle-timeout <seconds>', `the longest wait for a server's next byte: past it, exit 2 (default ${DEFAULT_BOUNDS.idleMs / 1000})`, positive('--idle-timeout', 3600))
    .option('--max-bytes <bytes>', `the most one streamed answer (an NDJSON export) may send: past it, exit 2 (default ${showBytes(DEFAULT_BOUNDS.maxBytes)})`, byteCount('--max-bytes'))
    .option('--max-json-bytes <bytes>', `the most one JSON value held whole may take (a document, or a line of an export): past it, exit 2 (default ${showBytes(DEFAULT_BOUNDS.maxJsonBytes)})`, byteCount('--max-json-bytes'))
    .action(async (source: string, opts: BoundOptions & {
      performance?: boolean; pin?: string[]; seen?: string[]; workers?: number; vkey?: string; header?: string[]; headersUrl?: string;
      checkpoint?: string; witnessPolicy?: string; witness?: string[]; quorum?: number;
    }) => {
      const bounds = boundsOf(opts);
      // The verifier is loaded when the command runs, so `ledger --help` does not pay for it.
      if (opts.performance) {
        const { verifyPerformance } = await import('../verify/performance.ts');
        process.exitCode = await verifyPerformance(source, (line) => console.log(line), fetch, bounds);
        return;
      }
      const bounded = boundedFetch(bounds, { streamNdjson: true });
      const [{ checkProofAnchor, runAnchorCheck }, { runVerify }, { readWitnessPolicy }] = await Promise.all([
        import('../verify/anchor.ts'), import('../verify/run.ts'), import('../verify/log.ts'),
      ]);
      const anchorOptions = {
        fetcher: bounded.fetch,
        ...(opts.header ? { headers: opts.header } : {}),
        ...(opts.headersUrl ? { headersUrl: opts.headersUrl } : {}),
        ...(opts.checkpoint ? { checkpoint: opts.checkpoint } : {}),
      };
      const out = (line: string) => console.log(line);
      if (/\.ots$/i.test(source)) {
        process.exitCode = await runAnchorCheck(source, anchorOptions, out);
        return bounded.close();
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
        bounded,
      }, out);
      const bundle = code === 2 ? null : await proofText(source, bounded.fetch);
      const anchorCode = bundle ? await checkProofAnchor(bundle, anchorOptions, out) : null;
      bounded.close();
      if (bounded.breach !== null && code !== 2) {
        out(`verdict: UNUSABLE INPUT: ${bounded.breach}`);
        process.exitCode = 2;
        return;
      }
      process.exitCode = Math.max(code, anchorCode ?? 0);
    });
}
