// `ledger backup <path>`: a consistent copy of the configured ledger while the service runs.
// SQLite: SQLite's online backup (store/sqlite/backup.ts). PostgreSQL: pg_dump of the ledger's
// schema when pg_dump is on PATH, else the exact command to run (docs/operations.md).
import type { Command } from 'commander';
import { spawnSync } from 'node:child_process';
import { resolve } from 'node:path';
import { loadConfig } from '../config.ts';

type Options = { database?: string };

const MB = 1024 * 1024;

async function backupPostgres(databaseUrl: string, path: string): Promise<void> {
  const [{ pgDumpCommand }, { redactUrl }] = await Promise.all([import('../store/postgres/dump.ts'), import('../store/open.ts')]);
  const command = pgDumpCommand(databaseUrl, path);
  const run = spawnSync('pg_dump', command.args, { env: { ...process.env, ...command.env }, stdio: ['ignore', 'inherit', 'pipe'], encoding: 'utf8' });
  if ((run.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') {
    throw new Error(`pg_dump is not on PATH, so no backup was made; with PostgreSQL's client tools installed, run:\n  ${command.display}`);
  }
  if (run.status !== 0) throw new Error(`pg_dump failed (exit ${run.status}): ${(run.stderr ?? '').trim()}\n  the command was: ${command.display}`);
  console.log(`backed up ${redactUrl(databaseUrl)} with pg_dump (custom format) to ${path}\n  ran: ${command.display}\n  restore into an empty database: pg_restore --dbname=<url> ${path}`);
}

export function registerBackupCommand(program: Command): void {
  program.command('backup <path>')
    .description('Back up the ledger while it runs: SQLite\'s online backup to <path>, or pg_dump of the PostgreSQL schema (custom format)')
    .option('--database <url>', 'sqlite:<path> or postgres://... (default: LEDGER_DATABASE_URL)')
    .action(async (path: string, opts: Options) => {
      const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
      const target = resolve(path);
      if (!config.databaseUrl.startsWith('sqlite:')) return backupPostgres(config.databaseUrl, target);
      const source = config.databaseUrl.slice('sqlite:'.length);
      if (source === ':memory:') throw new Error('an in-memory database has nothing to back up');
      const { backupSqlite } = await import('../store/sqlite/backup.ts');
      const started = performance.now();
      const result = await backupSqlite(source, target);
      const seconds = ((performance.now() - started) / 1000).toFixed(2);
      console.log(`backed up ${source} to ${target} with SQLite's online backup: ${result.pages} pages (${(result.bytes / MB).toFixed(1)} MiB), ${result.agents} agents, ${result.records} records, in ${seconds} s; quick_check ok`);
    });
}
