// Row <-> domain mapping shared by both adapters (their column names are the same).
import { sortKeyOf, type SignatureEnvelope, type RecordType } from '../core/chain.ts';
import type { Agent, AgentStatus, ApiKey, Scope, SigningKey, StoredRecord } from '../domain/types.ts';
import type { IdempotentResult } from './port.ts';

export type Row = Record<string, unknown>;

const str = (v: unknown): string => String(v);
const strOrNull = (v: unknown): string | null => (v === null || v === undefined ? null : String(v));

export function agentFromRow(r: Row): Agent {
  return {
    id: str(r.id),
    handle: str(r.handle),
    displayName: strOrNull(r.display_name),
    status: str(r.status) as AgentStatus,
    demo: Boolean(r.demo),
    createdAt: str(r.created_at),
  };
}

export function apiKeyFromRow(r: Row): ApiKey {
  return {
    id: str(r.id),
    agentId: str(r.agent_id),
    prefix: str(r.prefix),
    scopes: str(r.scopes).split(' ').filter(Boolean) as Scope[],
    createdAt: str(r.created_at),
    revokedAt: strOrNull(r.revoked_at),
  };
}

export function signingKeyFromRow(r: Row): SigningKey {
  return {
    id: str(r.id),
    agentId: str(r.agent_id),
    publicKey: str(r.public_key),
    label: str(r.label),
    createdAt: str(r.created_at),
    revokedAt: strOrNull(r.revoked_at),
  };
}

/** Agent columns selected with an `agent_` prefix alongside another table's columns. */
export function prefixedAgentFromRow(r: Row): Agent {
  return agentFromRow({
    id: r.agent_id,
    handle: r.agent_handle,
    display_name: r.agent_display_name,
    status: r.agent_status,
    demo: r.agent_demo,
    created_at: r.agent_created_at,
  });
}

export function recordFromRow(r: Row): StoredRecord {
  return {
    id: str(r.id),
    agentId: str(r.agent_id),
    agentHandle: str(r.handle),
    type: str(r.type) as RecordType,
    chainSeq: Number(r.chain_seq),
    recordedAt: str(r.recorded_at),
    symbol: strOrNull(r.symbol),
    content: str(r.content),
    contentHash: str(r.content_hash),
    prevHash: str(r.prev_hash),
    chainHash: str(r.chain_hash),
    signature: r.signature ? (JSON.parse(str(r.signature)) as SignatureEnvelope) : null,
    linkToken: strOrNull(r.link_token),
  };
}

/** An idempotency key's row joined with its record (RECORD_COLUMNS). */
export function idempotentFromRow(r: Row): IdempotentResult {
  return {
    fingerprint: str(r.fingerprint),
    status: Number(r.status),
    body: r.body ? str(r.body) : null,
    record: r.id ? recordFromRow(r) : null,
  };
}

/** Parameters of a records row, in the column order of INSERT_RECORD_SQLITE. */
export function recordParams(r: StoredRecord): unknown[] {
  return [r.id, sortKeyOf(r.id), r.agentId, r.type, r.chainSeq, r.recordedAt, r.symbol, r.content, r.contentHash,
    r.prevHash, r.chainHash, r.signature ? JSON.stringify(r.signature) : null, r.linkToken];
}

export const INSERT_RECORD_SQLITE = `INSERT INTO records (id, sort_key, agent_id, type, chain_seq, recorded_at, symbol, content,
  content_hash, prev_hash, chain_hash, signature, link_token) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`;

export const RECORD_COLUMNS =
  'r.id, r.agent_id, a.handle, r.type, r.chain_seq, r.recorded_at, r.symbol, r.content, ' +
  'r.content_hash, r.prev_hash, r.chain_hash, r.signature, r.link_token';

export const KEY_HOLDER_COLUMNS =
  'k.id, k.agent_id, k.prefix, k.secret_hash, k.scopes, k.created_at, k.revoked_at, ' +
  'a.handle AS agent_handle, a.display_name AS agent_display_name, a.status AS agent_status, ' +
  'a.demo AS agent_demo, a.created_at AS agent_created_at';
