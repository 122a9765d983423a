// @ts-check
// The checkpointer's thread (checkpointer.ts): a second connection to the database that runs
// `wal_checkpoint(<mode>)` for each mode it is sent and answers with SQLite's result. It loads the
// driver package the parent chose (driver.ts) by its resolved path, and nothing else.
//
// JavaScript (type-checked from its JSDoc), not TypeScript: the same file then runs from src/ and
// from dist/ without a loader, so the thread is up in tens of milliseconds even in the tests,
// before the WAL has grown (a TypeScript worker under tsx takes several hundred).
import { createRequire } from 'node:module';
import { parentPort, workerData } from 'node:worker_threads';

/** @typedef {{ path: string; betterSqlite3: string }} CheckpointWorkerData */
/** @typedef {{ busy: number; log: number; checkpointed: number }} CheckpointResult */
/** @typedef {{ ok: true; result: CheckpointResult } | { ok: false; message: string }} CheckpointReply */

const { path, betterSqlite3 } = /** @type {CheckpointWorkerData} */ (workerData);
const Database = /** @type {typeof import('better-sqlite3')} */ (createRequire(import.meta.url)(betterSqlite3));
const db = new Database(path, { fileMustExist: true });
db.pragma('busy_timeout = 10000');
const TRUNCATE_BUSY_MS = 200;

parentPort?.on('message', (/** @type {string} */ mode) => {
  /** @type {CheckpointReply} */
  let reply;
  try {
    // A TRUNCATE waits for readers and other writers: briefly, so that appends waiting on it
    // (checkpointer.ts) are never held long by a reader in another process.
    db.pragma(`busy_timeout = ${mode === 'TRUNCATE' ? TRUNCATE_BUSY_MS : 10000}`);
    const [result] = /** @type {CheckpointResult[]} */ (db.pragma(`wal_checkpoint(${mode})`));
    reply = { ok: true, result: /** @type {CheckpointResult} */ (result) };
  } catch (err) {
    reply = { ok: false, message: String(/** @type {Error | undefined} */ (err)?.message) };
  }
  parentPort?.postMessage(reply);
});
