// `ledger witness`: a standalone C2SP tlog-witness v1 server (src/witness/), meant to run on
// another machine than the log. Prints the witness vkey at start (the line a log operator or a
// verifier configures); stops on SIGTERM/SIGINT after the requests in flight.
import { hostname } from 'node:os';
import type { Command } from 'commander';

type Options = { logs: string; data: string; port: string; host: string; name?: string; prefix: string };

export function registerWitnessCommand(program: Command): void {
  program.command('witness')
    .description('Run a C2SP tlog-witness v1 server: cosign checkpoints of the listed logs that are consistent with what it cosigned before')
    .requiredOption('--logs <file>', 'the log list (witness network logs/v0 format: vkey, optional origin)')
    .option('--data <dir>', 'directory of the witness key (witness-key.pem) and state (witness.db)', 'witness-data')
    .option('--port <port>', 'port to listen on', '7380')
    .option('--host <host>', 'address to bind', '0.0.0.0')
    .option('--name <name>', 'the witness key name in cosignatures (default: <hostname>/witness); part of the vkey')
    .option('--prefix <path>', 'URL path prefix of add-checkpoint and the monitoring GET, e.g. /witness', '')
    .action(async (opts: Options) => {
      const port = Number(opts.port);
      if (!/^[0-9]+$/.test(opts.port) || port > 65535) throw new Error('--port must be 0 to 65535');
      if (opts.prefix !== '' && !/^(\/[A-Za-z0-9._~-]+)+$/.test(opts.prefix)) throw new Error('--prefix must be empty or /segments without a trailing slash');
      const name = opts.name ?? process.env.LEDGER_WITNESS_NAME ?? `${hostname()}/witness`;
      const { startWitness } = await import('../witness/http.ts');
      const w = await startWitness({ logsFile: opts.logs, dataDir: opts.data, port, host: opts.host, name, prefix: opts.prefix });
      if (w.keyCreated) console.error(`ledger witness: created the witness key ${w.keyPath} (mode 0600); keep it, it is the witness's identity`);
      if (w.looseKeyMode) console.error(`ledger witness: warning: ${w.keyPath} is readable by others; chmod 600 it`);
      console.log(`witness vkey: ${w.key.vkey}`);
      console.log(`listening on ${w.url} (${w.logCount} log${w.logCount === 1 ? '' : 's'}): POST ${opts.prefix}/add-checkpoint, GET ${opts.prefix}/<sha256(origin) hex>/checkpoint`);
      const shutdown = () => {
        w.stop().then(() => process.exit(0), () => process.exit(1));
      };
      process.once('SIGTERM', shutdown);
      process.once('SIGINT', shutdown);
    });
}
