// The global log in a serving process: loads (or generates, once) the log key, and makes the
// integrator that runs beside the HTTP service until shutdown (compose.ts starts and stops it). On PostgreSQL every API node runs one; the
// advisory lock lets exactly one of them integrate, and another takes over when it dies. With a
// witness policy (LEDGER_WITNESS_POLICY), the witnessing job beside it asks the witnesses.
import { readFile } from 'node:fs/promises';
import type { Config } from '../config.ts';
import { parseWitnessPolicy, type WitnessPolicy } from '../core/witness-policy.ts';
import type { LedgerStore } from '../store/port.ts';
import { Integrator } from './integrator.ts';
import { dataDirOf, loadLogKey, type LogKey } from './key.ts';
import { WitnessingJob } from './witnessing.ts';
import { throttled } from '../runtime/throttle.ts';

export type LogLogger = { info: (message: string) => void; warn: (message: string) => void; error: (message: string) => void };

/** Loads the log key; throws with one clear line when it cannot. */
export async function loadServiceLogKey(config: Config, logger: LogLogger): Promise<LogKey> {
  const loaded = await loadLogKey({ keyFile: config.logKeyFile, dataDir: dataDirOf(config.databaseUrl), origin: config.logOrigin });
  if (!loaded.ok) throw new Error(loaded.error);
  const { key, source } = loaded.value;
  if (source.kind === 'generated') {
    logger.info(`generated the global log's signing key in ${source.path} (vkey ${key.vkey}); back it up, and give every node the same file through LEDGER_LOG_KEY_FILE`);
  } else if (source.looseMode) {
    logger.warn(`the log key file ${source.path} is readable by others; chmod 600 it`);
  }
  return key;
}

/** The integrator of this node, not yet started. */
export function integratorJob(store: LedgerStore, key: LogKey, logger: LogLogger, onCheckpoint?: (treeSize: number) => void): Integrator {
  return new Integrator({
    log: store.log,
    key,
    ...(onCheckpoint ? { onCheckpoint } : {}),
    onError: throttled(logger.error),
    onNotice: throttled(logger.info),
    onTakeOver: (size) => logger.info(`log integrator: this node integrates the global log (tree size ${size})`),
  });
}

/** Reads and parses the witness policy file; throws with one clear line when it is unusable for the log. */
export async function loadWitnessPolicy(path: string): Promise<WitnessPolicy> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (e) {
    throw new Error(`LEDGER_WITNESS_POLICY: the witness policy ${path} could not be read (${(e as NodeJS.ErrnoException).code ?? 'error'})`);
  }
  const policy = parseWitnessPolicy(text);
  if (!policy.ok) throw new Error(`LEDGER_WITNESS_POLICY: the witness policy ${path}: ${policy.error}`);
  const unreachable = policy.value.witnesses.filter((w) => w.url === null).map((w) => w.name);
  if (unreachable.length > 0) throw new Error(`LEDGER_WITNESS_POLICY: the witness policy ${path}: witness ${unreachable.join(', ')} has no URL, so the log cannot ask it`);
  return policy.value;
}

/** The job that asks the policy's witnesses to cosign each new checkpoint (witnessing.ts), not yet started. */
export function witnessingJob(store: LedgerStore, policy: WitnessPolicy, logger: LogLogger): WitnessingJob {
  return new WitnessingJob({ policy, log: store.log, cosignatures: store.cosignatures, onNotice: throttled(logger.warn) });
}
