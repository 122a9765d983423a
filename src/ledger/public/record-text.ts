// Records as JSON text, for bodies that carry many of them: the stored content is already
// canon_v1 output, so it is embedded without parsing or re-serialising, and each record's chain
// entry is written in canon_v1 form, the exact bytes its chain_hash covers.
import { entryText, type RecordType } from '../../core/chain.ts';
import type { StoredRecord } from '../../domain/types.ts';

export type RecordShape = {
  /** Include `content` (the canonical string). */
  payloads: boolean;
  /** Also include `document` (the same content as a JSON object, for convenience). */
  document: boolean;
};

/**
 * One record as JSON text: `{"entry":{...},"chain_hash":"...","content":"...","document":{...}}`.
 * `entry` is written in canon_v1 form, so its bytes are those chain_hash covers; `content` is the
 * stored canonical string, `document` the same text embedded as an object.
 */
export function recordJson(r: StoredRecord, shape: RecordShape, extra = ''): string {
  let s = `{"entry":${entryText(r)},"chain_hash":${JSON.stringify(r.chainHash)}${provenanceText(r)}`;
  if (shape.payloads) {
    s += `,"content":${JSON.stringify(r.content)}`;
    if (shape.document) s += `,"document":${r.content}`;
  }
  return s + extra + '}';
}

/** Where a published execution or activity came from: imported by the broker sync from `broker`. */
export type Provenance = { provenance: 'BROKER_SYNCED'; broker: string | null };

/**
 * The provenance an execution or an activity is published with (imported by the broker sync,
 * never sent by the agent), from its content document; null for a decision (its provenance,
 * SERVICE_RECORDED, is in the decision response).
 */
export function provenanceOf(type: RecordType, document: unknown): Provenance | null {
  if (type !== 'execution' && type !== 'activity') return null;
  const broker = (document as { broker?: unknown } | null)?.broker;
  return { provenance: 'BROKER_SYNCED', broker: typeof broker === 'string' ? broker : null };
}

/** `,"provenance":"BROKER_SYNCED","broker":"<name>"` for an execution or an activity, '' for a decision. */
function provenanceText(r: StoredRecord): string {
  const p = r.type === 'execution' || r.type === 'activity' ? provenanceOf(r.type, JSON.parse(r.content)) : null;
  return p ? `,"provenance":${JSON.stringify(p.provenance)},"broker":${JSON.stringify(p.broker)}` : '';
}
