// The anchoring job (log_v1 §5). It is responsible for timestamping each new checkpoint on the
// OpenTimestamps calendars (at most every `intervalS`, and only when the tree grew), polling pending
// anchors for upgrades with backoff, and calling an anchor confirmed only once its Bitcoin
// attestation matches the block header from the header source. One job at a time across nodes (the
// store's hold). It never touches the record path; with no network it retries quietly with backoff
// and records since when the calendars are unreachable.
import { checkpointBodyDigest } from '../core/note.ts';
import { JobLoop } from '../runtime/job-loop.ts';
import type { AnchorSession, AnchorStore, StoredAnchor } from './port.ts';
import type { LogReader } from '../log/port.ts';
import { DEFAULT_CALENDAR_WHITELIST, stampDigest, upgradeFile, type CalendarError } from './calendar.ts';
import type { HttpOptions } from '../runtime/bounded-http.ts';
import { parseDetachedFile, serializeDetachedFile } from '../method/ots/codec.ts';
import { verifyDetachedFile, type HeaderLookup } from '../method/ots/verify.ts';

export type AnchorJobOptions = {
  anchors: AnchorStore;
  log: LogReader;
  calendars: string[];
  headerAt: HeaderLookup;
  intervalS: number;
  /** first upgrade poll after this many seconds, doubling per attempt up to maxBackoffS */
  pollS?: number;
  maxBackoffS?: number;
  /** pending anchors polled per round at most, oldest due first; the rest wait for the next round */
  pollsPerRound?: number;
  /** how often the loop wakes */
  tickMs?: number;
  http?: HttpOptions;
  now?: () => Date;
  /** said once when the calendars become unreachable and once when they answer again */
  onNotice?: (message: string) => void;
};

export const DEFAULT_POLL_S = 600;
const STOP_WAIT_MS = 3_000;
export const DEFAULT_MAX_BACKOFF_S = 6 * 3600;
const DEFAULT_POLLS_PER_ROUND = 24;

export class AnchorJob {
  private readonly loop: JobLoop;
  private stampFailures = 0;
  private nextStampAt = 0;

  constructor(private readonly options: AnchorJobOptions) {
    const tickMs = options.tickMs ?? 5_000;
    this.loop = new JobLoop({
      turn: async () => {
        await this.tick();
        return tickMs;
      },
      failed: (err) => {
        this.options.onNotice?.(`anchoring: ${err.message}`);
        return tickMs;
      },
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    // A round waiting on an unresponsive calendar must not hold up shutdown for its whole timeout.
    return this.loop.halt(STOP_WAIT_MS);
  }

  /**
   * One round: stamp the latest checkpoint when due, then poll the pending anchors that are due.
   * The job's hold is taken for the round and given back after it, not kept between rounds.
   */
  async tick(): Promise<{ held: boolean; stamped: number | null; confirmed: number[] }> {
    const session = await this.options.anchors.tryAnchorJob();
    if (!session) return { held: false, stamped: null, confirmed: [] };
    try {
      const stamped = await this.stampIfDue(session);
      const confirmed = await this.pollPending(session);
      return { held: true, stamped, confirmed };
    } finally {
      await session.release();
    }
  }

  private async stampIfDue(session: AnchorSession): Promise<number | null> {
    const now = this.now();
    if (now.getTime() < this.nextStampAt) return null;
    const [checkpoint, last] = await Promise.all([this.options.log.latestCheckpoint(), this.options.anchors.latest()]);
    if (!checkpoint || (last && last.treeSize >= checkpoint.treeSize)) return null;
    if (last && now.getTime() < Date.parse(last.createdAt) + this.options.intervalS * 1000) return null;
    const body = checkpointBodyDigest(checkpoint.note);
    if (!body) throw new Error(`checkpoint ${checkpoint.treeSize} has no body to anchor`);
    const stamp = await stampDigest(body.digest, this.options.calendars, { ...this.options.http, minAnswers: Math.min(2, this.options.calendars.length) });
    if (!stamp.ok) {
      this.stampFailures++;
      this.nextStampAt = now.getTime() + Math.min(30_000 * 2 ** Math.min(this.stampFailures, 20), Math.max(this.options.intervalS, 30) * 1000);
      const failures = stamp.error.kind === 'not_enough_answers' ? stamp.error.failures : [];
      await this.noteReachability(session, stamp.error.kind === 'not_enough_answers' && stamp.error.answered.length === 0, describe(failures));
      return null;
    }
    this.stampFailures = 0;
    this.nextStampAt = 0;
    await this.noteReachability(session, false, '');
    const ots = serializeDetachedFile(stamp.value.file);
    if (!ots.ok) throw new Error(`cannot serialise the .ots of checkpoint ${checkpoint.treeSize}: ${ots.error.message}`);
    await session.insert({
      treeSize: checkpoint.treeSize, root: body.root, digest: body.digest, ots: ots.value, status: 'pending',
      calendars: stamp.value.answered, block: null, createdAt: now.toISOString(), lastAttemptAt: now.toISOString(),
      lastError: stamp.value.failures.length ? describe(stamp.value.failures) : null, attempts: 0,
      nextAttemptAt: new Date(now.getTime() + (this.options.pollS ?? DEFAULT_POLL_S) * 1000).toISOString(),
    });
    return checkpoint.treeSize;
  }

  private async pollPending(session: AnchorSession): Promise<number[]> {
    const confirmed: number[] = [];
    const due = await session.due(this.now().toISOString(), this.options.pollsPerRound ?? DEFAULT_POLLS_PER_ROUND);
    for (const anchor of due) {
      if (await this.poll(session, anchor, this.now())) confirmed.push(anchor.treeSize);
    }
    return confirmed;
  }

  /** Asks the calendars for the anchor's upgrade; confirmed once an attestation matches its block header. */
  private async poll(session: AnchorSession, anchor: StoredAnchor, now: Date): Promise<boolean> {
    const parsed = parseDetachedFile(anchor.ots);
    if (!parsed.ok) throw new Error(`the stored .ots of checkpoint ${anchor.treeSize} does not parse: ${parsed.error.message}`);
    const upgrade = await upgradeFile(parsed.value, { ...this.options.http, allowedCalendars: [...this.options.calendars, ...DEFAULT_CALENDAR_WHITELIST] });
    const answered = upgrade.upgraded.length + upgrade.stillPending.length + upgrade.notFound.length;
    await this.noteReachability(session, answered === 0 && upgrade.failures.length > 0, describe(upgrade.failures));
    const ots = serializeDetachedFile(upgrade.file);
    if (!ots.ok) throw new Error(`cannot serialise the upgraded .ots of checkpoint ${anchor.treeSize}: ${ots.error.message}`);
    const verified = await verifyDetachedFile(upgrade.file, this.options.headerAt, anchor.digest);
    const block = verified.ok ? verified.confirmed.reduce((a, b) => (b.height < a.height ? b : a)) : null;
    const attempts = anchor.attempts + 1;
    const problems = [
      ...upgrade.failures.map((f) => `${f.calendar}: ${f.message}`),
      ...verified.failed.map((f) => `block ${f.height}: ${f.kind}`),
      ...verified.unavailable.map((u) => `header ${u.height}: ${u.error.message}`),
    ];
    const backoffS = Math.min((this.options.pollS ?? DEFAULT_POLL_S) * 2 ** attempts, this.options.maxBackoffS ?? DEFAULT_MAX_BACKOFF_S);
    await session.update(anchor.treeSize, {
      ots: ots.value,
      status: block ? 'confirmed' : 'pending',
      block: block ? { height: block.height, hash: block.blockHash, merkleRoot: block.merkleRoot, time: block.time } : null,
      lastAttemptAt: now.toISOString(),
      lastError: problems.length ? problems.join('; ').slice(0, 1000) : null,
      attempts,
      nextAttemptAt: block ? null : new Date(now.getTime() + backoffS * 1000).toISOString(),
    });
    return block !== null;
  }

  private async noteReachability(session: AnchorSession, unreachable: boolean, detail: string): Promise<void> {
    const since = await this.options.anchors.calendarsUnreachableSince();
    if (unreachable && since === null) {
      await session.setCalendarsUnreachableSince(this.now().toISOString());
      this.options.onNotice?.(`anchoring: no OpenTimestamps calendar answers (${detail}); retrying with backoff`);
    } else if (!unreachable && since !== null) {
      await session.setCalendarsUnreachableSince(null);
      this.options.onNotice?.(`anchoring: the calendars answer again (unreachable since ${since})`);
    }
  }
}

function describe(failures: CalendarError[]): string {
  return failures.map((f) => `${f.calendar}: ${f.message}`).join('; ').slice(0, 1000);
}
