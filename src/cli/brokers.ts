// `ledger brokers list|sync|disconnect` and `ledger master-key rotate`, run directly on the
// configured database. A sync prints a progress line while it runs. Credentials are never printed.
import { rename, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { loadConfig, type Config } from '../config.ts';
import type { BrokerConnections } from '../brokers/connections.ts';
import type { Keyring } from '../vault/vault.ts';
import type { LedgerStore } from '../store/port.ts';

type Common = { database?: string; json?: boolean };

const log = (level: string, message: string) => {
  if (level !== 'info') console.error(`ledger: ${message}`);
};

/** The modules the commands run on, loaded when one runs (not for `ledger --help`). */
async function load() {
  const [clock, service, connections, vault, keyringCheck, keyring, endpoints, open] = await Promise.all([
    import('../domain/clock.ts'), import('../brokers/service.ts'), import('../brokers/connections.ts'), import('../vault/vault.ts'),
    import('../vault/keyring-check.ts'), import('../vault/service.ts'),
    import('../webhooks/endpoints.ts'), import('../store/open.ts'),
  ]);
  return { ...clock, ...service, ...connections, ...vault, ...keyringCheck, ...keyring, ...endpoints, ...open };
}

async function withBrokers<T>(opts: Common, work: (c: BrokerConnections, store: LedgerStore, config: Config) => Promise<T>): Promise<T> {
  const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
  const { openStore, brokerConnections, keyringLoader, systemClock } = await load();
  const store = openStore(config.databaseUrl);
  try {
    await store.migrate();
    const keyring = keyringLoader(config.brokers, log, store.vault);
    return await work(brokerConnections({ store, config: config.brokers, siteUrl: config.siteUrl, clock: systemClock, log, keyring }), store, config);
  } finally {
    await store.close();
  }
}

function withCommon(cmd: Command): Command {
  return cmd.option('--database <url>', 'sqlite:<path> or postgres://... (default: LEDGER_DATABASE_URL)').option('--json', 'print JSON');
}

async function agentIdOf(store: LedgerStore, handle: string | undefined): Promise<string | undefined> {
  if (handle === undefined) return undefined;
  const agent = await store.findAgentByHandle(handle);
  if (!agent) throw new Error(`no agent ${handle}`);
  return agent.id;
}

export function registerBrokerCommands(program: Command): void {
  const brokers = program.command('brokers').description('Broker connections: list, sync, disconnect');

  withCommon(brokers.command('list').description('Every broker connection (or one agent\'s), never a credential'))
    .option('--agent <handle>', 'only this agent\'s')
    .action(async (opts: Common & { agent?: string }) => withBrokers(opts, async (c, store) => {
      const { connectionView } = await load();
      const list = (await c.listAll(await agentIdOf(store, opts.agent))).map((x) => ({ ...connectionView(x), agent_id: x.agentId }));
      if (opts.json) return console.log(JSON.stringify(list, null, 2));
      for (const x of list) {
        const last = x.last_sync ? `${x.last_sync.finished_at} ${x.last_sync.ok ? 'ok' : `failed: ${x.last_sync.error?.message}`}, ${x.last_sync.counts.executions_recorded} recorded` : 'never synced';
        console.log(`${x.id}  ${x.broker}  ${x.status}  accounts ${x.accounts.length}  ${last}`);
      }
    }));

  withCommon(brokers.command('sync <id>').description('Sync a connection now, with a progress line'))
    .action(async (id: string, opts: Common) => withBrokers(opts, async (c) => {
      const tty = process.stderr.isTTY;
      const outcome = await c.syncNow(id, (p) => {
        const line = `${p.phase}: ${p.fills_read} fills read, ${p.executions_recorded} recorded`;
        if (tty) process.stderr.write(`\r${line}\u001b[K`);
        else process.stderr.write(`${line}\n`);
      });
      if (tty) process.stderr.write('\n');
      if (opts.json) return console.log(JSON.stringify(outcome, null, 2));
      if (outcome.kind === 'busy') throw new Error('a sync of this connection is already running');
      if (outcome.kind === 'not_syncable') throw new Error(outcome.reason);
      const s = outcome.summary;
      console.log(`${s.ok ? 'synced' : `failed: ${s.error?.message}`}: ${s.counts.executions_recorded} recorded, ${s.counts.already_recorded} already recorded, ` +
        `${s.counts.linked_link_token} linked by token, ${s.counts.linked_inferred} inferred, ${s.caveats.length} caveats`);
      if (!s.ok) process.exitCode = 1;
    }));

  withCommon(brokers.command('disconnect <id>').description('Stop syncing and destroy the credentials (imported records stay)'))
    .action(async (id: string, opts: Common) => withBrokers(opts, async (c, store) => {
      const found = await store.brokers.findConnection(id);
      if (!found) throw new Error(`no broker connection ${id}`);
      const view = await c.disconnectConnection(found);
      console.log(opts.json ? JSON.stringify(view, null, 2) : `${view.id} disconnected`);
    }));

  const masterKey = program.command('master-key').description('The master key of the broker credentials vault');
  withCommon(masterKey.command('rotate').description('Add a new key version and re-seal every stored credential under it'))
    .option('--print-new', 'with LEDGER_MASTER_KEY: print the keyring with a new version added, to set on every node first')
    .action(async (opts: Common & { printNew?: boolean }) => {
      const config = loadConfig({ ...process.env, ...(opts.database ? { LEDGER_DATABASE_URL: opts.database } : {}) });
      const {
        loadMasterKeyring, formatKeyring, addKeyVersion, openStore, verifyKeyring, resealAll, resealSecrets,
      } = await load();
      const loaded = await loadMasterKeyring({
        env: { LEDGER_MASTER_KEY: config.brokers.masterKey ?? undefined, LEDGER_MASTER_KEY_FILE: config.brokers.masterKeyFile ?? undefined },
        dataDir: config.brokers.dataDir,
      });
      if (!loaded.ok) throw new Error(loaded.error.message);
      const source = loaded.value.source;
      // LEDGER_MASTER_KEY cannot be written from here: the operator adds the new version to it
      // (`1:<old>,2:<new>`, see --print-new) on every node, and rotate re-seals under the highest.
      if (source.kind === 'env' && opts.printNew) {
        console.log(formatKeyring(addKeyVersion(loaded.value.ring)));
        return;
      }
      const where = source.kind === 'env' ? 'LEDGER_MASTER_KEY' : source.path;
      const store = openStore(config.databaseUrl);
      try {
        await store.migrate();
        const vault = store.vault;
        // The keyring must open what it sealed before anything is re-sealed under a new version.
        const checkAgainst = async (ring: Keyring) => {
          const checked = await verifyKeyring(ring, vault, new Date().toISOString());
          if (!checked.ok) throw new Error(`${where}: ${checked.error.message}`);
        };
        await checkAgainst(loaded.value.ring);
        const ring = source.kind === 'env' ? loaded.value.ring : addKeyVersion(loaded.value.ring);
        if (source.kind !== 'env') {
          // Both versions stay in the file: a rotation interrupted half-way is finished by running it again.
          const temp = `${source.path}.rotate.tmp`;
          await writeFile(temp, formatKeyring(ring), { mode: 0o600 });
          await rename(temp, source.path);
          await checkAgainst(ring); // records the new version's check
        }
        const r = await resealAll(store.brokers, ring, new Date().toISOString());
        if (!r.ok) throw new Error(r.error.message);
        const hooks = await resealSecrets(store.webhooks, ring);
        if (!hooks.ok) throw new Error(hooks.error.message);
        console.log(`master key version ${ring.current.version} (${where}): re-sealed ${r.value.connections} connection(s), ${r.value.users} SnapTrade user secret(s) and ${hooks.value} webhook secret(s). Back the file up.`);
      } finally {
        await store.close();
      }
    });
}
