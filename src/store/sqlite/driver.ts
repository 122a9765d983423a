// Which build of better-sqlite3 this Node.js can run, chosen once at start-up.
//
// better-sqlite3 12 subclasses node::ObjectWrap, whose destructor changed in Node 24: a
// statement finalised there aborts the process (`Assertion failed: (env) != nullptr`), at exit
// or minutes into operation with worker threads. better-sqlite3 13 is built on Node-API, which
// fixes it, and ships prebuilt binaries inside its package; but it needs Node 22 or later (on
// Node 20 it fails at the first statement). Both versions have the same JavaScript API, so the
// store keeps one adapter and only the package differs:
//   - Node 22 and later: `better-sqlite3` (13, Node-API, prebuilt);
//   - Node 20 (end of life since 2026-04-30): `better-sqlite3-node20`, an npm alias of 12,
//     compiled at install time. It is an optional dependency, so installing on a newer Node never
//     fails for its sake.
import { createRequire } from 'node:module';
import type BetterSqlite3 from 'better-sqlite3';

export const NODE_MAJOR = Number(process.versions.node.split('.')[0]);

/** The package name to load better-sqlite3 from on this Node. */
export const SQLITE_DRIVER_PACKAGE = NODE_MAJOR >= 22 ? 'better-sqlite3' : 'better-sqlite3-node20';

const require = createRequire(import.meta.url);

function load(): typeof BetterSqlite3 {
  try {
    return require(SQLITE_DRIVER_PACKAGE) as typeof BetterSqlite3;
  } catch (err) {
    const hint = NODE_MAJOR >= 22
      ? 'run `npm ci` again'
      : 'Node 20 needs it compiled at install (a C++ toolchain and python3); better, use Node 22 or 24';
    throw new Error(`cannot load the SQLite driver ${SQLITE_DRIVER_PACKAGE} on Node ${process.versions.node}: ${hint} (${(err as Error).message})`);
  }
}

const Database: typeof BetterSqlite3 = load();

/** The resolved path of the driver package, for worker threads that open their own connection. */
export function sqliteDriverPath(): string {
  return require.resolve(SQLITE_DRIVER_PACKAGE);
}

export default Database;
export type SqliteDatabase = BetterSqlite3.Database;
export type SqliteStatement = BetterSqlite3.Statement;
