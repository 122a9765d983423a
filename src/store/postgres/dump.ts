// A backup of a PostgreSQL ledger is PostgreSQL's own: pg_dump of the ledger's schema, in its
// custom format (restored with pg_restore). This builds that command for a database URL, never
// putting the password on the command line (PGPASSWORD in the environment instead).
import { parsePostgresUrl } from './store.ts';

export type PgDumpCommand = {
  /** argv for pg_dump. */
  args: string[];
  /** Environment additions (the password, when the URL has one). */
  env: Record<string, string>;
  /** The command as an operator would type it, password left out. */
  display: string;
};

const quote = (s: string) => (/^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function pgDumpCommand(databaseUrl: string, file: string): PgDumpCommand {
  const { connectionString, schema = 'public' } = parsePostgresUrl(databaseUrl);
  const url = new URL(connectionString);
  const password = decodeURIComponent(url.password);
  url.password = '';
  const args = ['--format=custom', `--schema=${schema}`, `--file=${file}`, `--dbname=${url.toString()}`];
  return {
    args,
    env: password ? { PGPASSWORD: password } : {},
    display: `${password ? 'PGPASSWORD=… ' : ''}pg_dump ${args.map(quote).join(' ')}`,
  };
}
