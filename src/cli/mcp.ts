// `ledger mcp`: the tool server for agents (src/mcp) on stdio or Streamable HTTP, pointed at any
// ledger deployment; and `ledger signing-key create`, which makes the key file it signs with.
// This file owns only the command lines. In stdio mode stdout is the protocol: nothing else is
// printed there.
import { Command, Option } from 'commander';

const DEFAULT_BASE_URL = 'http://localhost:8080/v1';

type Target = { baseUrl?: string; apiKey?: string };

const targetOptions = (c: Command) => c
  .addOption(new Option('--base-url <url>', 'the ledger\'s API base').env('LEDGER_BASE_URL').default(DEFAULT_BASE_URL))
  .addOption(new Option('--api-key <key>', 'the agent\'s API key (dl_live_...)').env('LEDGER_API_KEY'));

export function registerMcpCommands(program: Command): void {
  targetOptions(program.command('mcp'))
    .description('Serve the ledger\'s tools to agents over the Model Context Protocol (stdio by default, or Streamable HTTP)')
    .addOption(new Option('--key-file <path>', 'a signing key file (ledger signing-key create): record_decision signs with it').env('LEDGER_KEY_FILE'))
    .option('--http', 'serve Streamable HTTP instead of stdio')
    .addOption(new Option('--host <host>', 'HTTP: address to bind (not loopback needs --http-token)').default('127.0.0.1'))
    .addOption(new Option('--port <port>', 'HTTP: port to listen on').env('LEDGER_MCP_PORT').default('8090'))
    .addOption(new Option('--http-token <token>', 'HTTP: bearer token every request must carry').env('LEDGER_MCP_HTTP_TOKEN'))
    .action(async (opts: Target & { keyFile?: string; http?: boolean; host: string; port: string; httpToken?: string }) => {
      if (!/^\d{1,5}$/.test(opts.port) || Number(opts.port) > 65535) throw new Error('--port must be a port number');
      const { mcpContext, serveHttp, serveStdio } = await import('../mcp/index.ts');
      const ctx = await mcpContext({ baseUrl: opts.baseUrl ?? DEFAULT_BASE_URL, apiKey: opts.apiKey, keyFile: opts.keyFile });
      const signing = ctx.signer ? `signing as ${ctx.signer.agent} with ${ctx.signer.keyId}` : 'unsigned (no --key-file)';
      if (!opts.http) {
        const close = await serveStdio(ctx);
        console.error(`ledger mcp: serving on stdio for ${ctx.client.baseUrl}, ${signing}`);
        process.stdin.once('end', () => void close().then(() => process.exit(0)));
        return;
      }
      const serving = await serveHttp(ctx, { host: opts.host, port: Number(opts.port), token: opts.httpToken });
      console.error(`ledger mcp: serving Streamable HTTP on ${serving.url} for ${ctx.client.baseUrl}, ${signing}`);
      const stop = () => void serving.close().then(() => process.exit(0));
      process.once('SIGTERM', stop);
      process.once('SIGINT', stop);
    });

  const signingKey = program.command('signing-key').description('Agent signing keys held in a key file');
  targetOptions(signingKey.command('create'))
    .description('Make an Ed25519 key pair, register its public half for the agent, and write the key file (mode 0600; never overwrites)')
    .requiredOption('--key-file <path>', 'where to write the key file')
    .requiredOption('--agent <handle>', 'the agent\'s handle (it is part of what is signed)')
    .option('--label <label>', 'the key\'s label on the service', 'ledger mcp')
    .action(async (opts: Target & { keyFile: string; agent: string; label: string }) => {
      if (!opts.apiKey) throw new Error('an API key with the keys:write scope is needed: --api-key or LEDGER_API_KEY');
      const { LedgerClient } = await import('../client/index.ts');
      const { createKeyFile } = await import('../mcp/index.ts');
      const client = new LedgerClient({ baseUrl: opts.baseUrl ?? DEFAULT_BASE_URL, apiKey: opts.apiKey });
      const file = await createKeyFile(opts.keyFile, { client, agent: opts.agent, label: opts.label });
      console.log(`wrote ${opts.keyFile}: key ${file.key_id} (public key ${file.public_key}) for agent ${file.agent}`);
    });
}
