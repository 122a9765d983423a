// The ledger's domain: agents, their API keys and signing keys, and records as stored. Types
// only; every layer from the store up speaks them.
import type { RecordType, SignatureEnvelope } from '../core/chain.ts';

export type AgentStatus = 'active' | 'paused' | 'retired';
export const AGENT_STATUSES: readonly AgentStatus[] = ['active', 'paused', 'retired'];

export type Agent = {
  id: string;
  handle: string;
  displayName: string | null;
  status: AgentStatus;
  demo: boolean;
  createdAt: string;
};

export type Scope = 'decisions:write' | 'decisions:read' | 'keys:write' | 'brokers:write' | 'brokers:read' | 'webhooks:write' | 'webhooks:read';
export const ALL_SCOPES: readonly Scope[] = ['decisions:write', 'decisions:read', 'keys:write', 'brokers:write', 'brokers:read', 'webhooks:write', 'webhooks:read'];

export type ApiKey = {
  id: string;
  agentId: string;
  /** The first characters of the secret, safe to show so an operator can tell keys apart. */
  prefix: string;
  scopes: Scope[];
  createdAt: string;
  revokedAt: string | null;
};

/** What authentication needs: the key and its agent, found by the secret's hash. */
export type KeyHolder = { key: ApiKey; secretHash: string; agent: Agent };

/** An agent's Ed25519 public key (raw 32 bytes, base64url). The service never holds a private key. */
export type SigningKey = {
  id: string;
  agentId: string;
  publicKey: string;
  label: string;
  createdAt: string;
  revokedAt: string | null;
};

export type ChainHead = { seq: number; hash: string; recordedAt: string | null };

/** A record as stored: the canonical content text and the members of its chain entry. */
export type StoredRecord = {
  id: string;
  agentId: string;
  agentHandle: string;
  type: RecordType;
  chainSeq: number;
  recordedAt: string;
  symbol: string | null;
  content: string;
  contentHash: string;
  prevHash: string;
  chainHash: string;
  signature: SignatureEnvelope | null;
  linkToken: string | null;
};


export type RecordCounts = { total: number; signed: number; byType: Record<RecordType, number> };

export type AgentHead = { agent: Agent; head: ChainHead };

/** A secret sealed by the vault (src/vault/vault.ts), with the master key version that sealed it. */
export type Sealed = { sealed: string; keyVersion: number };

/** An execution record linked to a decision, found through the broker import's link column. */
export type LinkedExecution = { decisionId: string; record: StoredRecord };

export type LinkedExecutions = {
  /** Per decision, oldest first, at most `perDecision`. */
  executions: LinkedExecution[];
  /** Per decision id, how many executions link to it in all. */
  totals: Map<string, number>;
};
