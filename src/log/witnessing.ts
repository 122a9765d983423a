// The witnessing job (docs/witnesses.md). It is responsible for sending each new checkpoint of the
// global log to every witness of the policy (LEDGER_WITNESS_POLICY) through C2SP tlog-witness
// `add-checkpoint`, with the consistency proof from the size that witness last cosigned (the log's
// own record of it, corrected by the witness's 409), verifying and storing each cosignature, and
// keeping each witness's state (last error, consecutive failures, next attempt). Each witness is
// asked on its own, never waited for by another, by a write or by the integrator: the log signs and
// publishes its checkpoints whatever the witnesses do. A witness that fails (down, slow, 5xx,
// garbage, or refusing the checkpoint as inconsistent) is asked again with exponential backoff. One
// process at a time asks (the store's hold, like the anchoring job's).
import type { WitnessPolicy, PolicyWitness } from '../core/witness-policy.ts';
import { consistencyPlan, planNodes, readProof, type Hash } from '../core/merkle.ts';
import { SingletonJob } from '../runtime/job-loop.ts';
import type { CosignatureSession, CosignatureStore, WitnessAttempt } from './port.ts';
import type { LogReader, StoredCheckpoint } from './port.ts';
import { TileReader } from './tree.ts';
import { addCheckpoint } from './witness-client.ts';

export type WitnessingOptions = {
  policy: WitnessPolicy;
  log: LogReader;
  cosignatures: CosignatureStore;
  /** One add-checkpoint exchange, answer included (default 5 s). */
  timeoutMs?: number;
  /** How often the latest checkpoint is looked at (default 100 ms). */
  pollMs?: number;
  /** The wait after a first failure, doubling per failure up to maxBackoffMs (defaults 1 s, 5 min). */
  minBackoffMs?: number;
  maxBackoffMs?: number;
  fetch?: typeof fetch;
  now?: () => Date;
  /** Said when a witness starts failing, when its error changes, and when it cosigns again. */
  onNotice?: (message: string) => void;
};

export const DEFAULT_WITNESS_TIMEOUT_MS = 5_000;
const STOP_WAIT_MS = 2_000;
/** A witness that answers 409 with a new size is asked again at once, this many times in all. */
const TRIES_PER_ROUND = 3;

/** What the job knows of one witness. */
type Asked = {
  witness: PolicyWitness & { url: string };
  /** The size the log believes the witness last cosigned; null: not known (send `old 0`). */
  knownSize: number | null;
  /** The largest tree size whose cosignature by this witness is stored. */
  cosignedSize: number;
  failures: number;
  lastError: string | null;
  nextAt: number;
  inFlight: Promise<void> | null;
};

/** The witnesses of a policy the log can ask: those with a URL. */
export function askableWitnesses(policy: WitnessPolicy): (PolicyWitness & { url: string })[] {
  return policy.witnesses.filter((w): w is PolicyWitness & { url: string } => w.url !== null);
}

export class WitnessingJob {
  private readonly job: SingletonJob<CosignatureSession>;
  private readonly tiles: TileReader;
  private asked: Asked[] | null = null;
  private stopped = false;

  constructor(private readonly options: WitnessingOptions) {
    this.tiles = new TileReader(options.log);
    const pollMs = options.pollMs ?? 100;
    this.job = new SingletonJob({
      take: () => options.cosignatures.tryWitnessJob(),
      turn: (session) => this.turn(session).then(() => pollMs),
      standbyMs: 5_000,
      onError: 'keep',
      failed: (err) => {
        this.options.onNotice?.(`witnessing: ${err.message}`);
        return 1_000;
      },
    });
  }

  start(): void {
    this.stopped = false;
    this.job.start();
  }

  /** Looks at the latest checkpoint now (the integrator just signed one) instead of at the next poll. */
  wake(): void {
    this.job.wake();
  }

  /** Stops asking; waits a little for the requests in flight (a hung witness is not waited for), then gives up the hold. */
  async stop(): Promise<void> {
    this.stopped = true;
    await this.job.halt(STOP_WAIT_MS);
    const inFlight = (this.asked ?? []).map((a) => a.inFlight).filter((p): p is Promise<void> => p !== null);
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([Promise.all(inFlight), new Promise<void>((r) => { timer = setTimeout(r, STOP_WAIT_MS); })]);
    clearTimeout(timer);
    await this.job.release();
  }

  /** Asks, now, every witness that has not cosigned the latest checkpoint and is not waiting; resolves once they answered (tests). */
  async askNow(): Promise<void> {
    const session = await this.job.hold();
    if (!session) return;
    await this.turn(session, true);
    await Promise.all((this.asked ?? []).map((a) => a.inFlight));
  }

  private now(): number {
    return (this.options.now?.() ?? new Date()).getTime();
  }

  private async load(): Promise<Asked[]> {
    const [latest, attempts] = await Promise.all([this.options.cosignatures.latestByWitness(), this.options.cosignatures.attempts()]);
    return askableWitnesses(this.options.policy).map((witness) => {
      const cosigned = latest.find((c) => c.witness === witness.vkeyText);
      const attempt = attempts.find((a) => a.witness === witness.vkeyText);
      return {
        witness,
        knownSize: cosigned?.treeSize ?? null,
        cosignedSize: cosigned?.treeSize ?? 0,
        failures: attempt?.failures ?? 0,
        lastError: attempt?.lastError ?? null,
        nextAt: attempt?.nextAttemptAt ? Date.parse(attempt.nextAttemptAt) : 0,
        inFlight: null,
      };
    });
  }

  private async turn(session: CosignatureSession, ignoreBackoff = false): Promise<void> {
    this.asked ??= await this.load();
    const checkpoint = await this.options.log.latestCheckpoint();
    if (!checkpoint) return;
    const now = this.now();
    for (const a of this.asked) {
      if (a.inFlight || a.cosignedSize >= checkpoint.treeSize || (!ignoreBackoff && now < a.nextAt)) continue;
      a.inFlight = this.ask(session, a, checkpoint).catch((err: Error) => this.failed(session, a, `the log could not ask it: ${err.message}`))
        .finally(() => {
          a.inFlight = null;
          if (!this.stopped) this.job.wake(); // a newer checkpoint may be waiting for this witness
        });
    }
  }

  /** One round with one witness for one checkpoint: up to three requests (a 409 teaches the witness's size). */
  private async ask(session: CosignatureSession, a: Asked, checkpoint: StoredCheckpoint): Promise<void> {
    const size = checkpoint.treeSize;
    for (let i = 0; i < TRIES_PER_ROUND; i++) {
      const old = a.knownSize ?? 0;
      if (old > size) return this.failed(session, a, `it has cosigned size ${old}, larger than the log's latest checkpoint (${size}): it holds another history of this log`);
      const reply = await addCheckpoint(a.witness.url, { old, proof: await this.proof(old, size), note: checkpoint.note }, a.witness.vkey, {
        timeoutMs: this.options.timeoutMs ?? DEFAULT_WITNESS_TIMEOUT_MS,
        ...(this.options.fetch ? { fetch: this.options.fetch } : {}),
      });
      if (this.stopped) return;
      switch (reply.kind) {
        case 'cosigned':
          await session.add({ treeSize: size, witness: a.witness.vkeyText, line: reply.line, cosignedAt: reply.time, receivedAt: new Date(this.now()).toISOString() });
          a.knownSize = size;
          a.cosignedSize = size;
          return this.succeeded(session, a, size);
        case 'size':
          if (reply.size === old) return this.failed(session, a, `answered 409 with the size it was sent (${old})`);
          a.knownSize = reply.size;
          continue;
        case 'inconsistent':
          a.knownSize = null;
          return this.failed(session, a, `refused checkpoint ${size} as inconsistent with what it cosigned before (${reply.status}${reply.reason ? `: ${reply.reason}` : ''}): a split view, or a witness holding another history of this log`);
        case 'failed':
          return this.failed(session, a, reply.reason);
      }
    }
    return this.failed(session, a, `its size changed ${TRIES_PER_ROUND} times in a row`);
  }

  private async proof(from: number, to: number): Promise<Hash[]> {
    if (from === 0 || from === to) return [];
    const plan = consistencyPlan(from, to);
    if (!plan.ok) throw new Error(plan.error);
    const proof = readProof(plan.value, await this.tiles.readerFor(planNodes(plan.value)));
    if (!proof.ok) throw new Error(`no consistency proof from ${from} to ${to}: ${proof.error}`);
    return proof.value;
  }

  private async succeeded(session: CosignatureSession, a: Asked, treeSize: number): Promise<void> {
    if (a.failures === 0 && a.lastError === null) return;
    this.options.onNotice?.(`witnessing: ${a.witness.name} cosigns again (checkpoint ${treeSize}) after ${a.failures} failed attempts`);
    a.failures = 0;
    a.lastError = null;
    a.nextAt = 0;
    await session.noteAttempt(this.attempt(a, null));
  }

  private async failed(session: CosignatureSession, a: Asked, error: string): Promise<void> {
    if (this.stopped) return;
    if (error !== a.lastError) this.options.onNotice?.(`witnessing: ${a.witness.name} (${a.witness.url}): ${error}; asking again with backoff`);
    a.failures++;
    a.lastError = error.slice(0, 1000);
    const minMs = this.options.minBackoffMs ?? 1_000;
    a.nextAt = this.now() + Math.min(minMs * 2 ** Math.min(a.failures - 1, 30), this.options.maxBackoffMs ?? 300_000);
    await session.noteAttempt(this.attempt(a, a.lastError)).catch(() => undefined);
  }

  private attempt(a: Asked, error: string | null): WitnessAttempt {
    const at = new Date(this.now()).toISOString();
    return {
      witness: a.witness.vkeyText, lastAttemptAt: at, lastError: error, lastErrorAt: error ? at : null, failures: a.failures,
      nextAttemptAt: error ? new Date(a.nextAt).toISOString() : null,
    };
  }
}
