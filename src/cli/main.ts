// The `ledger` command: serve, and the operator's agent and API-key commands against the
// configured database. Errors are one line on stderr and a non-zero exit, never a stack trace.
import { Command, Option } from 'commander';
import { ConfigError, loadConfig } from '../config.ts';
import { registerOperatorCommands } from './operators.ts';
import { registerVerifyCommand } from './verify.ts';
import { registerBrokerCommands } from './brokers.ts';
import { registerBackupCommand } from './backup.ts';
import { registerMigrateCommand } from './migrate.ts';
import { registerMcpCommands } from './mcp.ts';
import { registerDemoCommand } from './demo.ts';
import { registerWitnessCommand } from './witness.ts';

const program = new Command()
  .name('ledger')
  .description('The decision ledger: a tamper-evident track record for automated investing agents.')
  .showHelpAfterError();

program.command('serve')
  .description('Run the HTTP service (SQLite under ./data by default)')
  .addOption(new Option('--port <port>', 'port to listen on').env('PORT'))
  .addOption(new Option('--host <host>', 'address to bind').env('HOST'))
  .addOption(new Option('--database <url>', 'sqlite:<path> or postgres://...').env('LEDGER_DATABASE_URL'))
  .action(async (opts: { port?: string; host?: string; database?: string }) => {
    const config = loadConfig({
      ...process.env,
      ...(opts.port ? { PORT: opts.port } : {}),
      ...(opts.host ? { HOST: opts.host } : {}),
      ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}),
    });
    // Loaded here so the operator commands don't pay for the HTTP stack.
    const { startServer } = await import('../server.ts');
    const server = await startServer(config);
    const shutdown = (signal: string) => {
      server.ledger.app.log.info({ signal }, 'shutting down: finishing in-flight writes');
      server.stop().then(() => process.exit(0), (err) => {
        console.error(`ledger: shutdown failed: ${(err as Error).message}`);
        process.exit(1);
      });
    };
    process.once('SIGTERM', () => shutdown('SIGTERM'));
    process.once('SIGINT', () => shutdown('SIGINT'));
  });

registerOperatorCommands(program);
registerVerifyCommand(program);
registerBrokerCommands(program);
registerBackupCommand(program);
registerMigrateCommand(program);
registerMcpCommands(program);
registerDemoCommand(program);
registerWitnessCommand(program);

try {
  await program.parseAsync(process.argv);
} catch (err) {
  const message = err instanceof ConfigError ? `configuration: ${err.message}` : (err as Error).message;
  console.error(`ledger: ${message}`);
  process.exit(err instanceof ConfigError ? 2 : 1);
}
