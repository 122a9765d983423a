// The vault's master keyring for a serving process: loaded once from the configuration, checked
// against the database before first use (keyring-check.ts), then kept; broker connections and
// webhook endpoints seal and open with it. A generated key is announced once, with where it is and
// that it must be backed up.
import type { BrokerConfig } from '../config.ts';
import { verifyKeyring } from './keyring-check.ts';
import type { VaultStore } from './port.ts';
import { loadMasterKeyring, type Keyring } from './vault.ts';

/** Where the master key comes from (set with the broker settings: LEDGER_MASTER_KEY, LEDGER_MASTER_KEY_FILE, the data directory). */
export type MasterKeyConfig = Pick<BrokerConfig, 'masterKey' | 'masterKeyFile' | 'dataDir'>;

export type VaultLog = (level: 'info' | 'warn' | 'error', message: string) => void;

/** The keyring cannot be used: not found, malformed, or not the key the database's secrets were sealed with. One line, no key material. */
export class KeyringError extends Error {}

/**
 * Loads the master keyring on first use, checks it against the database (keyring-check.ts) and
 * keeps it; throws a KeyringError (one clear line) when it cannot be used. The server calls it at
 * start, so a node never runs with a wrong key.
 */
export function keyringLoader(config: MasterKeyConfig, log: VaultLog, vault: VaultStore): () => Promise<Keyring> {
  let loading: Promise<Keyring> | null = null;
  return () => (loading ??= (async () => {
    const r = await loadMasterKeyring({
      env: { LEDGER_MASTER_KEY: config.masterKey ?? undefined, LEDGER_MASTER_KEY_FILE: config.masterKeyFile ?? undefined },
      dataDir: config.dataDir,
    });
    if (!r.ok) throw new KeyringError(r.error.message);
    const source = r.value.source;
    const checked = await verifyKeyring(r.value.ring, vault, new Date().toISOString());
    if (!checked.ok) throw new KeyringError(`${source.kind === 'env' ? 'LEDGER_MASTER_KEY' : `master key file ${source.path}`}: ${checked.error.message}`);
    if (source.kind === 'generated') {
      log('warn', `generated the master key at ${source.path}, which seals broker credentials and webhook secrets: back it up (without it, they cannot be opened), or set LEDGER_MASTER_KEY / LEDGER_MASTER_KEY_FILE`);
    } else if (source.kind === 'file' && source.looseMode) {
      log('warn', `the master key file ${source.path} is readable by others: chmod 600 it`);
    }
    return r.value.ring;
  })().catch((err: unknown) => {
    loading = null;
    throw err;
  }));
}
