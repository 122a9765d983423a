// The shapes the pages read: the public documents as the public reads return them (only the
// members the pages use), and one view of a record for display.
import type { RecordType, SignatureEnvelope } from '../core/chain.ts';
import { provenanceOf, type Provenance } from '../ledger/public/record-text.ts';

export type Head = { seq: number; chain_hash: string; recorded_at: string | null };

export type SigningKeyView = { id: string; public_key: string; label: string; created_at: string; revoked_at: string | null; status: string };

export type Caveat = { code: string; message: string };

export type AgentProfile = {
  handle: string;
  display_name: string | null;
  status: string;
  demo: boolean;
  created_at: string;
  chain: { head: Head; url: string; export_url: string };
  counts: { records: number; decision: number; execution: number; signed: number };
  signing_keys: SigningKeyView[];
  portfolios: unknown[];
  performance: unknown;
  caveats: Caveat[];
};

/** Only with a witness policy: whether a checkpoint's cosignatures satisfy its quorum. */
export type WitnessedView = { quorum_satisfied: boolean; cosigned_by: string[] };

export type InclusionProof = { log_index: number; tree_size: number; hashes: string[]; checkpoint: string; tlog_proof: string; witnessed?: WitnessedView };

/** The witnesses' part of /v1/transparency's log, present only with a witness policy. */
export type WitnessesView = {
  quorum: string;
  checkpoint: WitnessedView | null;
  witnesses: { name: string; vkey: string; last_cosigned_size: number | null; last_cosigned_at: string | null; last_error: string | null; last_error_at: string | null; failures: number; next_attempt_at: string | null }[];
};

export type AnchorView = {
  tree_size: number; root: string; status: 'pending' | 'confirmed'; calendars: string[]; created_at: string;
  block_height: number | null; block_hash: string | null; block_time: string | null; ots_url: string;
};

/** A proof bundle's document (its record is the stored record beside it). */
export type ProofBundle = {
  id: string;
  agent: { handle: string; status: string | null; demo: boolean; head: Head };
  key: (SigningKeyView & { valid_for_record: boolean }) | null;
  inclusion_proof: InclusionProof | null;
  inclusion_pending: { message: string } | null;
  anchor_proof: (AnchorView & { checkpoint: string | null }) | null;
  links: { self: string; chain_from_here: string; export: string };
};

export type HeadRow = Head & { agent: string; demo: boolean; status: string };

export type Guarantee = { name: string; covers: string; does_not_cover: string };

export type Transparency = {
  counts: { agents: number; demo_agents: number; records: number; decision: number; execution: number; signed: number };
  heads: HeadRow[];
  guarantees: Guarantee[];
  how_to_verify: string;
};

export type ExecutionLink = { method: 'link_token' | 'inferred'; decision_id: string };

/** One record as the pages show it: its place in the chain and its content document. */
export type RecordView = {
  id: string;
  type: RecordType;
  agent: string;
  seq: number;
  recordedAt: string;
  signedBy: string | null;
  /** The content document (canon_v1 content holds strings, objects and arrays only). */
  content: Record<string, unknown>;
  link: ExecutionLink | null;
  /** An execution's or an activity's, as published (imported by the broker sync); null for a decision. */
  provenance: Provenance | null;
};

export type TimelineItem = { decision: RecordView; executions: RecordView[]; executionsTotal: number };

function parseContent(text: string): Record<string, unknown> {
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

function linkOf(content: Record<string, unknown>): ExecutionLink | null {
  const l = content.link as Partial<ExecutionLink> | null | undefined;
  if (!l || typeof l.decision_id !== 'string' || (l.method !== 'link_token' && l.method !== 'inferred')) return null;
  return { method: l.method, decision_id: l.decision_id };
}

export function recordView(r: {
  id: string; type: RecordType; chainSeq: number; recordedAt: string; content: string; signature: SignatureEnvelope | null; agentHandle: string;
}): RecordView {
  const content = parseContent(r.content);
  return {
    id: r.id,
    type: r.type,
    agent: r.agentHandle,
    seq: r.chainSeq,
    recordedAt: r.recordedAt,
    signedBy: r.signature?.key_id ?? null,
    content,
    link: r.type === 'execution' ? linkOf(content) : null,
    provenance: provenanceOf(r.type, content),
  };
}
