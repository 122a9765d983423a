// Recording imported non-trade activities as `activity` records, each once.
// It owns the exactly-once rule of activities. Every activity is appended with the Idempotency-Key
// `broker-activity:<first key>` (keys per broker and account, activity.ts), so a sync run twice,
// two nodes syncing together, or a sync killed after its append and run again records each
// activity once; the index (broker_activities) is written after the append, and a rerun that finds
// the key used repairs the index from the record the key points to.
import { canonicalJson } from '../core/canon.ts';
import { sha256Hex } from '../core/sha256.ts';
import type { Agent } from '../domain/types.ts';
import { appendRecords, type AppendRequest } from '../ledger/append.ts';
import type { Clock } from '../domain/clock.ts';
import type { BrokerStore, ImportedActivity } from './port.ts';
import type { LedgerStore } from '../store/port.ts';
import { activityContent, activityKeys, dedupeActivities, type BrokerActivity } from './activity.ts';
import { refusal, symbolCaveat } from './reported.ts';

export type ActivityImportDeps = { store: LedgerStore; brokers: BrokerStore; clock: Clock };

export type ActivityImport = {
  recorded: number;
  alreadyRecorded: number;
  skipped: { brokerActivityId: string; message: string }[];
  /** Recorded as reported, with a caveat (reported.ts). */
  flagged: { brokerActivityId: string; message: string }[];
  /** Set when the agent cannot record (paused, retired...): nothing after it was recorded. */
  stopped: string | null;
};

/** The Idempotency-Key of an activity: its first key. */
export const activityIdempotencyKey = (keys: readonly string[]) => `broker-activity:${keys[0]}`;

const CHUNK = 1000;

/** Activities (oldest first) -> activity records, each once. */
export async function recordActivities(
  deps: ActivityImportDeps, target: { agent: Agent; connectionId: string }, activities: BrokerActivity[],
): Promise<ActivityImport> {
  const result: ActivityImport = { recorded: 0, alreadyRecorded: 0, skipped: [], flagged: [], stopped: null };
  for (let i = 0; i < activities.length && result.stopped === null; i += CHUNK) {
    await recordChunk(deps, target, activities.slice(i, i + CHUNK), result);
  }
  return result;
}

async function recordChunk(
  deps: ActivityImportDeps, target: { agent: Agent; connectionId: string }, activities: BrokerActivity[], result: ActivityImport,
): Promise<void> {
  const { agent, connectionId } = target;
  const known = await deps.brokers.importedActivityKeys(agent.id, activityKeys(activities).flat());
  const fresh = dedupeActivities(activities, (k) => known.has(k));
  result.alreadyRecorded += activities.length - fresh.length;
  const requests: AppendRequest[] = [];
  const keysOf: string[][] = [];
  for (const { activity, keys } of fresh) {
    const refused = refusal({ symbol: activity.symbol, at: activity.occurredAt, price: activity.price }, deps.clock.now());
    const content = activityContent({ agent: agent.handle, activity });
    if (refused !== null || !content.ok) {
      result.skipped.push({ brokerActivityId: activity.brokerActivityId, message: refused ?? (content.ok ? '' : content.error.message) });
      continue;
    }
    const caveat = symbolCaveat(activity.symbol);
    if (caveat !== null) result.flagged.push({ brokerActivityId: activity.brokerActivityId, message: caveat });
    const payload = canonicalJson(content.document);
    requests.push({
      agentId: agent.id, agentHandle: agent.handle, type: 'activity', symbol: activity.symbol, content: payload, contentHash: sha256Hex(payload),
      signature: null, linkToken: null, idempotency: { key: activityIdempotencyKey(keys), fingerprint: sha256Hex(`broker-activity\n${keys[0]}`) },
    });
    keysOf.push(keys);
  }
  if (requests.length === 0) return;
  const outcomes = await appendRecords(deps.store, requests, deps.clock);
  const index: ImportedActivity[] = [];
  for (let i = 0; i < outcomes.length; i++) {
    const outcome = outcomes[i]!;
    const keys = keysOf[i]!;
    let recordId: string;
    if (outcome.kind === 'recorded') {
      recordId = outcome.record.id;
      result.recorded++;
    } else if (outcome.kind === 'idempotency_conflict') {
      // Recorded by an earlier run (killed before it indexed) or by another node just now.
      const earlier = await deps.store.findIdempotent(agent.id, activityIdempotencyKey(keys));
      if (!earlier?.record) throw new Error('an imported activity\'s Idempotency-Key points to no record');
      recordId = earlier.record.id;
      result.alreadyRecorded++;
    } else {
      result.stopped = outcome.kind;
      break;
    }
    for (const key of keys) index.push({ agentId: agent.id, key, connectionId, recordId });
  }
  await deps.brokers.saveImportedActivities(index);
}
