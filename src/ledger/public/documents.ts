// The public documents about agents: the profile, the transparency page, and the views of chain
// heads and signing keys they share. Plain data in, plain objects out.
import type { RecordType } from '../../core/chain.ts';
import type { Agent, ChainHead, SigningKey } from '../../domain/types.ts';
import { GUARANTEES } from './guarantees.ts';

export function headView(head: ChainHead) {
  return { seq: head.seq, chain_hash: head.hash, recorded_at: head.recordedAt };
}

export type KeyStatus = 'active' | 'revoked';

export function publicKeyView(key: SigningKey) {
  return {
    id: key.id,
    public_key: key.publicKey,
    label: key.label,
    created_at: key.createdAt,
    revoked_at: key.revokedAt,
    status: (key.revokedAt === null ? 'active' : 'revoked') as KeyStatus,
  };
}

/** A key signs validly for a record unless it was revoked before the record's recorded_at. */
export function keyValidAt(key: SigningKey, recordedAt: string): boolean {
  return key.revokedAt === null || Date.parse(key.revokedAt) >= Date.parse(recordedAt);
}

export function agentSummary(agent: Agent) {
  return {
    handle: agent.handle,
    display_name: agent.displayName,
    status: agent.status,
    demo: agent.demo,
    created_at: agent.createdAt,
  };
}

export type Caveat = { code: string; message: string };

/** What the performance wing adds to a profile; without it the profile says nothing is computed. */
export type ProfileSections = { portfolios: object[]; performance: object | null; caveats: Caveat[] };

export function profileView(
  agent: Agent,
  head: ChainHead,
  counts: { total: number; signed: number; byType: Record<RecordType, number> },
  keys: SigningKey[],
  links: { chain: string; export: string },
  sections: ProfileSections | null = null,
) {
  const intentOnly: Caveat = {
    code: 'records_state_intent_only',
    message: 'A decision record proves what the agent said and when the service received it; it does not prove that a trade happened.',
  };
  const caveats: Caveat[] = sections ? [...sections.caveats, intentOnly] : [
    {
      code: 'portfolio_not_computed',
      message: 'No model portfolio or broker portfolio is computed for this agent yet: portfolios is empty because nothing has been built from its records, not because it holds nothing.',
    },
    {
      code: 'performance_not_computed',
      message: 'No performance is computed for this agent yet: performance is null. Nothing on this profile states a return.',
    },
    intentOnly,
  ];
  if (agent.demo) {
    caveats.unshift({
      code: 'demo_agent',
      message: 'This is a demo agent: its records are for demonstration and are hidden from the public ledger unless include_demo=true.',
    });
  }
  return {
    object: 'agent_profile' as const,
    id: agent.handle,
    handle: agent.handle,
    display_name: agent.displayName,
    status: agent.status,
    demo: agent.demo,
    created_at: agent.createdAt,
    chain: { head: headView(head), url: links.chain, export_url: links.export },
    counts: {
      records: counts.total, decision: counts.byType.decision, execution: counts.byType.execution, activity: counts.byType.activity, signed: counts.signed,
    },
    signing_keys: keys.map(publicKeyView),
    portfolios: sections?.portfolios ?? [],
    performance: sections?.performance ?? null,
    caveats,
  };
}

export type HeadPin = { agent: string; demo: boolean; status: string; seq: number; chain_hash: string; recorded_at: string | null };

export function transparencyView(
  now: Date,
  heads: HeadPin[],
  counts: { total: number; signed: number; byType: Record<RecordType, number> },
  baseUrl: string,
) {
  const demo = heads.filter((h) => h.demo);
  return {
    object: 'transparency' as const,
    generated_at: now.toISOString(),
    canonicalisation: 'canon_v1' as const,
    algorithm: 'sha256' as const,
    counts: {
      agents: heads.length,
      demo_agents: demo.length,
      records: counts.total,
      decision: counts.byType.decision,
      execution: counts.byType.execution,
      activity: counts.byType.activity,
      signed: counts.signed,
    },
    heads,
    guarantees: GUARANTEES.map((g) => ({ ...g })),
    how_to_verify: `Pin the heads above. Later, fetch ${baseUrl}/export?agent=<handle> (or ${baseUrl}/agents/<handle>/chain) and run \`ledger verify <file or URL> --pin <seq>:<chain_hash>\`: it recomputes every hash with canon_v1 and checks that the pinned head is still in the chain.`,
  };
}
