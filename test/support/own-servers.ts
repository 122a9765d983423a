// Tests that run servers of their own (PostgreSQL, Redis) or need root (a tmpfs for a full disk)
// skip with a visible message when the machine cannot, except under CI=true, where they fail.
import { postgresServerProblem } from './pg-server.ts';
import { redisServerProblem } from './redis-server.ts';

export type Need = 'postgres-server' | 'redis-server' | 'root';

function problemOf(need: Need): string | null {
  switch (need) {
    case 'postgres-server': return postgresServerProblem();
    case 'redis-server': return redisServerProblem();
    case 'root': return process.getuid?.() === 0 ? null : 'not running as root (mounting a tmpfs needs it)';
  }
}

/** node:test's `skip` for a suite with these needs: false, or why not (printed); throws under CI=true. */
export function skipUnlessAble(...needs: Need[]): false | string {
  const problems = needs.map(problemOf).filter((p): p is string => p !== null);
  if (problems.length === 0) return false;
  const message = `${problems.join('; ')}; skipping`;
  if (process.env.CI === 'true') throw new Error(`CI=true requires ${needs.join(', ')}: ${message}`);
  console.warn(`# SKIP ${message}`);
  return message;
}
