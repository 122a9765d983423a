// `ledger migrate --to postgres://...`: copies the configured SQLite ledger into an empty
// PostgreSQL database or schema, every id, hash and timestamp unchanged (store/copy.ts), with
// progress, and commits only once every table reads back the same on both sides.
import type { Command } from 'commander';
import { loadConfig } from '../config.ts';

type Options = { to: string; database?: string };

/** At most one progress line per table a second, plus its last one. */
function progressPrinter(print: (line: string) => void) {
  let last = 0;
  return (table: string, copied: number, total: number) => {
    const now = performance.now();
    if (copied !== total && now - last < 1000) return;
    last = now;
    const share = total === 0 ? 100 : Math.floor((copied / total) * 100);
    print(`copying ${table}: ${copied} of ${total} rows (${share}%)`);
  };
}

export function registerMigrateCommand(program: Command): void {
  program.command('migrate')
    .description('Copy a SQLite ledger into an empty PostgreSQL database or schema, every id, hash and timestamp unchanged, and verify the copy table by table')
    .requiredOption('--to <url>', 'the target: postgres://user@host:port/db (add ?schema=<name> for a schema other than public)')
    .option('--database <url>', 'the SQLite ledger, sqlite:<path> (default: LEDGER_DATABASE_URL)')
    .action(async (opts: Options) => {
      const [{ copySqliteToPostgres }, { redactUrl }] = await Promise.all([import('../store/copy.ts'), import('../store/open.ts')]);
      const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
      if (!config.databaseUrl.startsWith('sqlite:') || config.databaseUrl === 'sqlite::memory:') {
        throw new Error(`ledger migrate copies a SQLite ledger file; the source is ${redactUrl(config.databaseUrl)}`);
      }
      if (!/^postgres(ql)?:\/\/.+/.test(opts.to)) throw new Error('--to must be a postgres:// URL');
      const source = config.databaseUrl.slice('sqlite:'.length);
      const started = performance.now();
      console.log(`copying ${source} into ${redactUrl(opts.to)} (one transaction: nothing is visible there until the copy is verified)`);
      const reports = await copySqliteToPostgres(source, opts.to, progressPrinter((line) => console.log(line)));
      console.log('verified: each table read back in key order on both sides has the same rows, value for value:');
      for (const r of reports) console.log(`  ${r.table.padEnd(20)} ${String(r.rows).padStart(9)} rows  sha256 ${r.digest.slice(0, 16)}…`);
      const rows = reports.reduce((n, r) => n + r.rows, 0);
      console.log(`done: ${rows} rows in ${((performance.now() - started) / 1000).toFixed(1)} s; point LEDGER_DATABASE_URL at ${redactUrl(opts.to)} to serve from PostgreSQL`);
    });
}
