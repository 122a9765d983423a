// A job's hold on PostgreSQL (the log integrator, the webhook deliverer, the pricing and anchoring
// jobs): a session advisory lock taken on a connection of its own. It lasts while that connection
// lives, so when the holding process dies (or its connection does) PostgreSQL frees the lock and
// another node takes it; ending the connection gives it back.
import type pg from 'pg';

/**
 * Connects `client` and takes the session advisory lock `key` (hashed with hashtext) on it.
 * False, with the client ended, while another session holds the lock or the database does not answer.
 */
export async function takeSessionLock(client: pg.Client, key: string): Promise<boolean> {
  try {
    await client.connect();
    const { rows } = await client.query('SELECT pg_try_advisory_lock(hashtext($1)) AS locked', [key]);
    if (rows[0]?.locked === true) return true;
  } catch {
    // unreachable database: no hold this time
  }
  await client.end().catch(() => undefined);
  return false;
}
