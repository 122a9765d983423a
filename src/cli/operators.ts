// `ledger agents ...` and `ledger api-keys ...`: the admin API's operations, run directly on the
// configured database (LEDGER_DATABASE_URL or --database). `--json` prints machine-readable output.
import type { Command } from 'commander';
import { agentView, apiKeyView } from '../domain/views.ts';
import { loadConfig } from '../config.ts';
import type { Result } from '../domain/errors.ts';
import type { Operators } from '../ledger/operators.ts';
import type { AgentStatus, Scope } from '../domain/types.ts';
import type { LedgerStore } from '../store/port.ts';

type Common = { database?: string; json?: boolean };

async function withOperators<T>(opts: Common, work: (ops: Operators, store: LedgerStore) => Promise<T>): Promise<T> {
  const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
  const [{ openStore }, { Operators }, { systemClock }] = await Promise.all([
    import('../store/open.ts'), import('../ledger/operators.ts'), import('../domain/clock.ts'),
  ]);
  const store = openStore(config.databaseUrl);
  try {
    await store.migrate();
    return await work(new Operators(store, systemClock), store);
  } finally {
    await store.close();
  }
}

function unwrap<T>(result: Result<T>): T {
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

function print(opts: Common, json: unknown, text: string): void {
  console.log(opts.json ? JSON.stringify(json, null, 2) : text);
}

const scopesOf = (s?: string): Scope[] | undefined => (s ? s.split(',').map((x) => x.trim()).filter(Boolean) as Scope[] : undefined);

function withCommon(cmd: Command): Command {
  return cmd.option('--database <url>', 'sqlite:<path> or postgres://... (default: LEDGER_DATABASE_URL)').option('--json', 'print JSON');
}

export function registerOperatorCommands(program: Command): void {
  const agents = program.command('agents').description('Create and manage agents');

  withCommon(agents.command('create <handle>').description('Create an agent and its first API key (the secret is printed once)'))
    .option('--display-name <name>', 'a display name')
    .option('--demo', 'mark as a demo agent (hidden from the public ledger by default)')
    .option('--scopes <list>', 'comma-separated scopes (default: all)')
    .action(async (handle: string, opts: Common & { displayName?: string; demo?: boolean; scopes?: string }) => {
      const { agent, apiKey } = await withOperators(opts, async (ops) =>
        unwrap(await ops.createAgent({ handle, displayName: opts.displayName ?? null, demo: opts.demo ?? false, scopes: scopesOf(opts.scopes) })));
      print(opts, { agent: agentView(agent), api_key: apiKeyView(apiKey, agent.handle, apiKey.secret) },
        `created agent ${agent.handle}\nAPI key ${apiKey.id} (${apiKey.scopes.join(' ')})\nsecret (shown once): ${apiKey.secret}`);
    });

  withCommon(agents.command('list').description('List agents')).action(async (opts: Common) => {
    const list = await withOperators(opts, (ops) => ops.listAgents());
    print(opts, list.map(agentView), list.map((a) => `${a.handle}\t${a.status}${a.demo ? '\tdemo' : ''}\t${a.createdAt}`).join('\n') || '(no agents)');
  });

  const statusCommand = (name: string, status: AgentStatus, description: string) =>
    withCommon(agents.command(`${name} <handle>`).description(description)).action(async (handle: string, opts: Common) => {
      const agent = await withOperators(opts, async (ops) => unwrap(await ops.setStatus(handle, status)));
      print(opts, agentView(agent), `${agent.handle} is ${agent.status}`);
    });
  statusCommand('pause', 'paused', 'Pause an agent: it cannot record until resumed');
  statusCommand('resume', 'active', 'Resume a paused agent');
  statusCommand('retire', 'retired', 'Retire an agent for good: its history stays, it records nothing more');

  const keys = program.command('api-keys').description('Issue, list and revoke API keys');

  withCommon(keys.command('create <handle>').description('Issue an API key for an agent (the secret is printed once)'))
    .option('--scopes <list>', 'comma-separated scopes (default: all)')
    .action(async (handle: string, opts: Common & { scopes?: string }) => {
      const { agent, apiKey } = await withOperators(opts, async (ops) => unwrap(await ops.issueKey(handle, scopesOf(opts.scopes))));
      print(opts, apiKeyView(apiKey, agent.handle, apiKey.secret), `API key ${apiKey.id} for ${agent.handle} (${apiKey.scopes.join(' ')})\nsecret (shown once): ${apiKey.secret}`);
    });

  withCommon(keys.command('list').description('List API keys (never their secrets)'))
    .option('--agent <handle>', 'only this agent\'s keys')
    .action(async (opts: Common & { agent?: string }) => {
      const rows = await withOperators(opts, async (ops) => {
        const list = unwrap(await ops.listKeys(opts.agent));
        const handles = new Map((await ops.listAgents()).map((a) => [a.id, a.handle]));
        return list.map((k) => apiKeyView(k, handles.get(k.agentId) ?? ''));
      });
      print(opts, rows, rows.map((k) => `${k.id}\t${k.agent}\t${k.prefix}…\t${k.scopes.join(' ')}\t${k.revoked_at ? `revoked ${k.revoked_at}` : 'active'}`).join('\n') || '(no keys)');
    });

  withCommon(keys.command('revoke <id>').description('Revoke an API key, immediately and for good')).action(async (id: string, opts: Common) => {
    const key = await withOperators(opts, async (ops) => unwrap(await ops.revokeKey(id)));
    print(opts, apiKeyView(key, ''), `revoked ${key.id} at ${key.revokedAt}`);
  });
}
