// Tests that run servers of their own (PostgreSQL, Redis), need root (a tmpfs for a full disk) or
// a tool (strace, libfiu's fiu-run: `.ci/run` installs both) skip with a visible message when the
// machine cannot, except under CI=true, where they fail.
import { spawnSync } from 'node:child_process';
import { postgresServerProblem } from './pg-server.ts';
import { redisServerProblem } from './redis-server.ts';

export type Need = 'postgres-server' | 'redis-server' | 'root' | 'strace' | 'fiu-run';

/** Null when `command` is on the PATH, else why not (with the Debian package that has it). */
function toolProblem(command: string, debianPackage: string): string | null {
  const found = spawnSync('sh', ['-c', `command -v ${command}`], { encoding: 'utf8' });
  return found.status === 0 ? null : `${command} is not installed (apt-get install ${debianPackage})`;
}

function problemOf(need: Need): string | null {
  switch (need) {
    case 'postgres-server': return postgresServerProblem();
    case 'redis-server': return redisServerProblem();
    case 'root': return process.getuid?.() === 0 ? null : 'not running as root (mounting a tmpfs needs it)';
    case 'strace': return toolProblem('strace', 'strace');
    case 'fiu-run': return toolProblem('fiu-run', 'fiu-utils') ?? toolProblem('fiu-ctrl', 'fiu-utils');
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
