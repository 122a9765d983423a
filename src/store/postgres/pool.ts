// The connection pool every PostgreSQL adapter shares (the store, log, anchors, market, site,
// brokers, webhooks), and the one place that tells "the database cannot answer now" (unreachable,
// silent past a timeout, a pool with no free connection in time, a statement or lock that waited
// too long) from "this request is wrong". Every query and checkout through the pool rejects with
// StoreUnavailable for the former (answered 503 with Retry-After), so no adapter can forget it.
import pg from 'pg';
import { StoreUnavailable } from '../port.ts';

const UNAVAILABLE_NETWORK = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH', 'ENETUNREACH']);
const UNAVAILABLE_SQLSTATES = new Set(['08000', '08001', '08003', '08004', '08006', '57P01', '57P02', '57P03', '53100', '53300', '55P03', '57014', '25P03']);
const UNAVAILABLE_MESSAGE = /Connection terminated|connection timeout|timeout exceeded|Query read timeout|ECONNREFUSED|ECONNRESET|EPIPE|ETIMEDOUT|EHOSTUNREACH|Client has encountered a connection error/i;

/** `err` as StoreUnavailable when it means the database cannot answer now, else null. */
export function unavailable(err: unknown): StoreUnavailable | null {
  if (err instanceof StoreUnavailable) return err;
  const e = err as { code?: string; message?: string };
  if ((e.code && (UNAVAILABLE_SQLSTATES.has(e.code) || UNAVAILABLE_NETWORK.has(e.code))) || UNAVAILABLE_MESSAGE.test(e.message ?? '')) {
    return new StoreUnavailable(`the database is not answering: ${e.message ?? String(err)}`, { cause: err });
  }
  return null;
}

/** Rethrows `err` as StoreUnavailable when it means the database cannot answer. */
export function rethrow(err: unknown): never {
  throw unavailable(err) ?? err;
}

/** The connection itself failed (no SQLSTATE: the server said nothing): it cannot be trusted with another statement. */
export function connectionLost(err: unknown): boolean {
  const code = (err as { code?: unknown }).code;
  const answeredByServer = typeof code === 'string' && /^[0-9A-Z]{5}$/.test(code) && !UNAVAILABLE_NETWORK.has(code);
  return !answeredByServer && unavailable(err) !== null;
}

const isPromise = (v: unknown): v is Promise<unknown> => typeof (v as { then?: unknown } | null)?.then === 'function';

/**
 * pg.Pool whose promise-returning `query` and `connect` reject with StoreUnavailable when the
 * database cannot answer. The callback forms, which pg-pool uses inside itself, are left as they
 * are. Set on the prototype rather than declared, so pg's typed overloads stay as they are.
 */
export class LedgerPool extends pg.Pool {
  static {
    const { query, connect } = pg.Pool.prototype as unknown as Record<string, (...args: unknown[]) => unknown>;
    const mapped = (method: (...args: unknown[]) => unknown) => function (this: pg.Pool, ...args: unknown[]): unknown {
      const result = method.apply(this, args);
      return typeof args.at(-1) !== 'function' && isPromise(result) ? result.catch(rethrow) : result;
    };
    Object.assign(LedgerPool.prototype, { query: mapped(query!), connect: mapped(connect!) });
  }

  /**
   * Runs `work` in one transaction on one checked-out client. `begin` may add statements to
   * BEGIN's round trip (a simple query: no parameters).
   */
  transaction<T>(work: (c: pg.PoolClient) => Promise<T>, begin = 'BEGIN'): Promise<T> {
    return this.scriptedTransaction(async (client) => {
      await client.query(begin);
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    });
  }

  /**
   * Runs `work` on one checked-out client, whose own statements begin the transaction (BEGIN at
   * the head of its first round trip) and commit it (COMMIT at the tail of its last). On failure,
   * the transaction is rolled back, or the connection dropped when it is the connection that failed.
   */
  async scriptedTransaction<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    const client: pg.PoolClient = await this.connect();
    let broken: Error | undefined;
    try {
      return await work(client);
    } catch (err) {
      // A connection that is gone or silent is destroyed, not rolled back: a ROLLBACK on it would
      // wait a whole query timeout more, and the server aborts the transaction when it closes.
      // A client that cannot even roll back has lost its connection too: never reuse it.
      if (connectionLost(err)) broken = err as Error;
      else await client.query('ROLLBACK').catch((rollbackError: Error) => (broken = rollbackError));
      rethrow(err);
    } finally {
      client.release(broken);
    }
  }
}

/**
 * What a sub-port's PostgreSQL adapter uses of the store it belongs to: the pool of the call (the
 * read pool inside a public read) and the schema. A type, so the store builds its sub-ports without
 * an import cycle.
 */
export type PostgresHost = { readonly pool: LedgerPool; readonly schema: string };
