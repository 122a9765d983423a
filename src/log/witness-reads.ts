// What the log publishes of its witnesses: each checkpoint with every cosignature
// received for it (the signature lines appended to the log's own), whether those satisfy the
// policy's quorum, and each witness's state for /v1/transparency and the transparency page.
// Without a policy none of this is asked and nothing published changes.
import { describeQuorum, quorumSatisfied, type WitnessPolicy } from '../core/witness-policy.ts';
import type { CosignatureReader, StoredCosignature } from './port.ts';
import type { StoredCheckpoint } from './port.ts';

export type Witnessing = { policy: WitnessPolicy; cosignatures: CosignatureReader };

/** Whether a checkpoint satisfies the quorum, and by whom it is cosigned (policy names). */
export type WitnessedView = { quorum_satisfied: boolean; cosigned_by: string[] };

export type WitnessStateView = {
  name: string;
  vkey: string;
  last_cosigned_size: number | null;
  last_cosigned_at: string | null;
  last_error: string | null;
  last_error_at: string | null;
  failures: number;
  next_attempt_at: string | null;
};

export type WitnessesView = {
  quorum: string;
  /** The published checkpoint's status (null while the log is empty). */
  checkpoint: WitnessedView | null;
  witnesses: WitnessStateView[];
};

const isoOf = (seconds: number) => new Date(seconds * 1000).toISOString();

export class WitnessReads {
  constructor(private readonly witnessing: Witnessing) {}

  /** The checkpoint with the cosignatures received for it, and what they satisfy. */
  async cosigned(checkpoint: StoredCheckpoint): Promise<{ checkpoint: StoredCheckpoint; witnessed: WitnessedView }> {
    const rows = await this.witnessing.cosignatures.at(checkpoint.treeSize);
    return { checkpoint: { ...checkpoint, note: checkpoint.note + rows.map((r) => r.line).join('') }, witnessed: this.view(rows) };
  }

  private view(rows: StoredCosignature[]): WitnessedView {
    const { policy } = this.witnessing;
    const names = policy.witnesses.filter((w) => rows.some((r) => r.witness === w.vkeyText)).map((w) => w.name);
    return { quorum_satisfied: quorumSatisfied(policy, new Set(names)), cosigned_by: names };
  }

  /**
   * The witnesses' part of /v1/transparency: their states, read now, completed with the status of
   * the checkpoint the caller reads after them. Cosignatures only accrue, so a witness then never
   * shows as having cosigned a size that the published checkpoint does not carry.
   */
  async transparency(): Promise<(witnessed: WitnessedView | null) => WitnessesView> {
    const { policy, cosignatures } = this.witnessing;
    const [latest, attempts] = await Promise.all([cosignatures.latestByWitness(), cosignatures.attempts()]);
    return (witnessed) => ({
      quorum: describeQuorum(policy),
      checkpoint: witnessed,
      witnesses: policy.witnesses.map((w) => {
        const c = latest.find((r) => r.witness === w.vkeyText);
        const a = attempts.find((r) => r.witness === w.vkeyText);
        return {
          name: w.name,
          vkey: w.vkeyText,
          last_cosigned_size: c?.treeSize ?? null,
          last_cosigned_at: c ? isoOf(c.cosignedAt) : null,
          last_error: a?.lastError ?? null,
          last_error_at: a?.lastErrorAt ?? null,
          failures: a?.failures ?? 0,
          next_attempt_at: a?.nextAttemptAt ?? null,
        };
      }),
    });
  }
}
