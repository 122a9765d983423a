// The events and their JSON bodies, in the Standard Webhooks shape `{type, timestamp, data}`:
// what an agent's endpoint hears about its own records. A record event carries the record as the
// chain page shows it (its canon_v1 chain entry, chain hash and content), so a receiver can check
// it with the core exactly as it checks a chain page. Checkpoint and anchor events name only the
// agent's own records they newly cover.
import { b64Encode } from '../core/base64.ts';
import type { StoredRecord } from '../domain/types.ts';
import { recordJson } from '../ledger/public/record-text.ts';
import { PublicUrls } from '../ledger/public/urls.ts';
import type { AnchorEvent, CheckpointEvent, LeafOwner, WebhookEventType } from './port.ts';

/** What is sent for one event: the same for every endpoint of the agent. */
export type EventBody = { type: WebhookEventType; subject: string; payload: string };

const RECORD_EVENTS: Record<StoredRecord['type'], WebhookEventType> = { decision: 'decision.recorded', execution: 'execution.recorded', activity: 'activity.recorded' };

export const recordEventType = (r: StoredRecord): WebhookEventType => RECORD_EVENTS[r.type];

/** `{type, timestamp, data}` with `data` given as JSON text. */
function envelope(type: WebhookEventType, timestamp: string, data: string): string {
  return `{"type":${JSON.stringify(type)},"timestamp":${JSON.stringify(timestamp)},"data":${data}}`;
}

/** `fields` as a JSON object, with `rawName` holding the JSON text `raw` appended. */
function objectWith(fields: Record<string, unknown>, rawName: string, raw: string): string {
  return `${JSON.stringify(fields).slice(0, -1)},${JSON.stringify(rawName)}:${raw}}`;
}

export class EventBodies {
  private readonly urls: PublicUrls;

  constructor(private readonly baseUrl: string) {
    this.urls = new PublicUrls(baseUrl);
  }

  record(r: StoredRecord): EventBody {
    const type = recordEventType(r);
    const data = objectWith({
      object: r.type,
      id: r.id,
      agent: r.agentHandle,
      chain_seq: r.chainSeq,
      recorded_at: r.recordedAt,
      content_hash: r.contentHash,
      chain_hash: r.chainHash,
      agent_signed: r.signature !== null,
      proof_url: this.urls.proofUrl(r.id),
    }, 'record', recordJson(r, { payloads: true, document: true }));
    return { type, subject: r.id, payload: envelope(type, r.recordedAt, data) };
  }

  /** The checkpoint that first includes the agent's `leaves`. */
  checkpoint(c: CheckpointEvent, leaves: readonly LeafOwner[]): EventBody {
    const data = JSON.stringify({
      object: 'checkpoint',
      tree_size: c.treeSize,
      root: b64Encode(c.root),
      checkpoint: c.note,
      records: leaves.map((l) => ({ id: l.recordId, log_index: l.logIndex, proof_url: this.urls.proofUrl(l.recordId) })),
    });
    return { type: 'checkpoint.published', subject: String(c.treeSize), payload: envelope('checkpoint.published', c.createdAt, data) };
  }

  /** A confirmed anchor covering the agent's records up to `latest` (and every one before it). */
  anchor(a: AnchorEvent, latest: LeafOwner, at: string): EventBody {
    const data = JSON.stringify({
      object: 'anchor',
      tree_size: a.treeSize,
      root: a.root,
      status: 'confirmed',
      block: { height: a.blockHeight, hash: a.blockHash, time: a.blockTime },
      ots_url: `${this.baseUrl}/anchors/${a.treeSize}.ots`,
      covers_through: { id: latest.recordId, log_index: latest.logIndex, proof_url: this.urls.proofUrl(latest.recordId) },
    });
    return { type: 'anchor.confirmed', subject: String(a.treeSize), payload: envelope('anchor.confirmed', at, data) };
  }
}
