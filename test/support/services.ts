// Test access to the real services this machine runs: PostgreSQL and Redis. A test that needs
// one and cannot reach it skips with a visible message, except under CI=true, where it fails.
import pg from 'pg';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';

export const POSTGRES_URL = process.env.TEST_POSTGRES_URL ?? 'postgres://root@127.0.0.1:5432/test';
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';
const CI = process.env.CI === 'true';

// A busy machine (two test files at a time, a browser, CI) can drop one connection attempt; a
// service counts as unreachable only when three attempts over about three seconds all fail.
const ATTEMPTS = 3;
const PAUSE_MS = 1000;

async function reachable(check: () => Promise<void>): Promise<string | null> {
  let problem = '';
  for (let attempt = 1; attempt <= ATTEMPTS; attempt++) {
    try {
      await check();
      return null;
    } catch (err) {
      problem = (err as Error).message;
      if (attempt < ATTEMPTS) await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    }
  }
  return `${problem}, ${ATTEMPTS} attempts`;
}

let postgresState: Promise<string | null> | null = null;
let redisState: Promise<string | null> | null = null;

export function postgresProblem(): Promise<string | null> {
  return (postgresState ??= reachable(async () => {
    const client = new pg.Client({ connectionString: POSTGRES_URL, connectionTimeoutMillis: 3000 });
    await client.connect();
    await client.query('SELECT 1');
    await client.end();
  }));
}

export function redisProblem(): Promise<string | null> {
  return (redisState ??= reachable(async () => {
    const redis = new Redis(REDIS_URL, { connectTimeout: 2000, maxRetriesPerRequest: 1, lazyConnect: true, retryStrategy: () => null });
    try {
      await redis.connect();
      await redis.ping();
    } finally {
      redis.disconnect();
    }
  }));
}

/**
 * What node:test's `skip` option should be for a test needing a service: false when reachable,
 * a message when not; under CI=true an unreachable service throws, failing the test run.
 */
export async function skipUnless(service: 'postgres' | 'redis'): Promise<false | string> {
  const problem = await (service === 'postgres' ? postgresProblem() : redisProblem());
  if (problem === null) return false;
  const message = `${service} is not reachable (${problem}); skipping the ${service} tests`;
  if (CI) throw new Error(`CI=true requires ${service}: ${message}`);
  console.warn(`# SKIP ${message}`);
  return message;
}

/** A fresh PostgreSQL schema name per test run; `?schema=` is understood by openStore. */
export function freshPostgresUrl(): string {
  const schema = `t_${Date.now().toString(36)}_${randomBytes(4).toString('hex')}`;
  return `${POSTGRES_URL}?schema=${schema}`;
}

/** Drops a schema made by freshPostgresUrl (test hygiene; the record tables forbid DELETE, not DROP). */
export async function dropPostgresSchema(url: string): Promise<void> {
  const schema = new URL(url).searchParams.get('schema');
  if (!schema || !/^t_[a-z0-9_]+$/.test(schema)) return;
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
  } finally {
    await client.end();
  }
}
