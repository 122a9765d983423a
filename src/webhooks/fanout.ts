// The outbox's fan-out: reads what was committed after the cursor (records by sort key, then the
// checkpoints whose records are all read, then the confirmed anchors of checkpoints already
// read) and writes one message per subscribed endpoint of the owning agent, moving the cursor in
// the same transaction. It runs after the fact, beside the record path: an append never waits
// for it and never sees it. A crash before the commit leaves the cursor where it was (the step is
// done again); messages are unique per endpoint, type and subject, so nothing is doubled.
// Records are read in sort-key order, which is commit order on both stores (one writer on
// SQLite, the per-schema append lock on PostgreSQL), so none committing later is skipped, and each
// agent's records come in chain order.
import { monotonicFactory } from 'ulid';
import type { StoredRecord } from '../domain/types.ts';
import { sortKeyOf } from '../core/chain.ts';
import type { LeafOwner, NewMessage, WebhookEndpoint, WebhookEventType, WebhookSession } from './port.ts';
import { EventBodies, recordEventType, type EventBody } from './events.ts';

const nextUlid = monotonicFactory();
export const messageId = (): string => 'msg_' + nextUlid();

export type FanOutLimits = { records: number; checkpoints: number; anchors: number;
  /** Checkpoints and anchors are looked for at most this often (checkpoints come every 250 ms at most). */
  logEveryMs: number };
export const FAN_OUT_LIMITS: FanOutLimits = { records: 500, checkpoints: 32, anchors: 16, logEveryMs: 250 };

/** Active endpoints by agent, each with the events it takes. */
class Subscribers {
  private readonly byAgent = new Map<string, WebhookEndpoint[]>();

  constructor(endpoints: readonly WebhookEndpoint[]) {
    for (const e of endpoints) this.byAgent.set(e.agentId, [...(this.byAgent.get(e.agentId) ?? []), e]);
  }

  of(agentId: string, type: WebhookEventType): WebhookEndpoint[] {
    return (this.byAgent.get(agentId) ?? []).filter((e) => e.events.includes(type));
  }

  agentsTaking(type: WebhookEventType): string[] {
    return [...this.byAgent.keys()].filter((agent) => this.of(agent, type).length > 0);
  }
}

export class FanOut {
  private logReadAt = -Infinity;

  constructor(
    private readonly bodies: EventBodies,
    private readonly now: () => Date,
    private readonly limits: FanOutLimits = FAN_OUT_LIMITS,
  ) {}

  /** One step; answers how many source items it read (0: nothing was waiting). */
  async step(session: WebhookSession, endpoints: readonly WebhookEndpoint[]): Promise<number> {
    const cursor = await session.cursor();
    if (!cursor) return 0;
    const subscribers = new Subscribers(endpoints);
    const at = this.now().toISOString();
    const messages: NewMessage[] = [];
    const add = (endpoint: WebhookEndpoint, agentId: string, body: EventBody) =>
      messages.push({ id: messageId(), endpointId: endpoint.id, agentId, type: body.type, subject: body.subject, payload: body.payload, createdAt: at });

    const records = await session.recordsAfter(cursor.recordSortKey, this.limits.records);
    for (const r of records) this.fanRecord(r, subscribers, add);
    const recordSortKey = records.length > 0 ? sortKeyOf(records[records.length - 1]!.id) : cursor.recordSortKey;

    let checkpointSize = cursor.checkpointSize;
    let checkpointsRead = 0;
    const readLog = performance.now() - this.logReadAt >= this.limits.logEveryMs;
    if (readLog) this.logReadAt = performance.now();
    for (const c of readLog ? await session.checkpointsAfter(cursor.checkpointSize, this.limits.checkpoints) : []) {
      if (c.lastSortKey > recordSortKey) break; // its records first
      const takers = subscribers.agentsTaking('checkpoint.published');
      if (takers.length > 0) {
        const byAgent = groupByAgent(await session.leafOwners(c.previousSize, c.treeSize));
        for (const agentId of takers) {
          const leaves = byAgent.get(agentId);
          if (!leaves) continue;
          const body = this.bodies.checkpoint(c, leaves);
          for (const e of subscribers.of(agentId, 'checkpoint.published')) add(e, agentId, body);
        }
      }
      checkpointSize = c.treeSize;
      checkpointsRead++;
    }

    const anchors = readLog ? await session.unannouncedAnchors(cursor.anchorFloor, checkpointSize, this.limits.anchors) : [];
    for (const a of anchors) {
      for (const agentId of subscribers.agentsTaking('anchor.confirmed')) {
        const latest = await session.latestLeafOf(agentId, a.treeSize);
        // Nothing of the agent's is newly covered: an earlier confirmed anchor covers it all.
        if (!latest || latest.logIndex < a.previousConfirmedSize) continue;
        const body = this.bodies.anchor(a, latest, at);
        for (const e of subscribers.of(agentId, 'anchor.confirmed')) add(e, agentId, body);
      }
    }

    const read = records.length + checkpointsRead + anchors.length;
    if (read > 0) await session.fanOut(messages, { ...cursor, recordSortKey, checkpointSize }, anchors.map((a) => a.treeSize));
    // A full page of checkpoints: look again on the next turn.
    if (checkpointsRead === this.limits.checkpoints) this.logReadAt = -Infinity;
    return read;
  }

  private fanRecord(r: StoredRecord, subscribers: Subscribers, add: (e: WebhookEndpoint, agentId: string, body: EventBody) => void): void {
    const endpoints = subscribers.of(r.agentId, recordEventType(r));
    if (endpoints.length === 0) return;
    const body = this.bodies.record(r);
    for (const e of endpoints) add(e, r.agentId, body);
  }
}

function groupByAgent(leaves: readonly LeafOwner[]): Map<string, LeafOwner[]> {
  const out = new Map<string, LeafOwner[]>();
  for (const l of leaves) out.set(l.agentId, [...(out.get(l.agentId) ?? []), l]);
  return out;
}
