// The witness's storage port: per log origin, the latest checkpoint it cosigned (size, root, and the
// note it serves on the monitoring GET). Owns the contract that `advance` is a compare-and-swap:
// it stores the new state only if the stored one is still what the caller checked against, in one
// durable transaction, so no restart or second process can roll a log's state back or fork it.
import type { Hash } from '../core/merkle.ts';

export type CosignedState = { origin: string; size: number; root: Hash; note: string; cosignedAt: number };

export type AdvanceResult = { ok: true } | { ok: false; current: CosignedState | null };

export interface WitnessStatePort {
  /** The latest state for origin, or null when the witness never cosigned for it. */
  latest(origin: string): CosignedState | null;
  /**
   * Stores `next` if the stored state is `expected` (same size and root; null = none), durably,
   * before returning ok. Otherwise nothing changes and the stored state is returned.
   */
  advance(expected: { size: number; root: Hash } | null, next: CosignedState): AdvanceResult;
  close(): void;
}
