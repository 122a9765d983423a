// Schemas of the public reads: query validation (every bad value is a 400 naming its parameter)
// and the documented response shapes, with examples, that /v1/openapi.json publishes.
import { Type, type TSchema } from '@sinclair/typebox';
import { canonicalJson } from '../../../core/canon.ts';
import { sha256Hex } from '../../../core/sha256.ts';
import { RECORDED_AT_PATTERN } from '../../../core/time.ts';
import { HANDLE_PATTERN } from '../../../domain/handle.ts';
import { GUARANTEES } from '../../../ledger/public/guarantees.ts';
import { AGENT_STATUSES } from '../../../domain/types.ts';
import { AnchorView } from './anchor-schemas.ts';
import { ProfilePerformance, ProfilePortfolio } from './performance-schemas.ts';
import { PriceObservationView } from './market-schemas.ts';
import { NO_CONTROL_CHARACTERS, RECORD_ID_PATTERN, stringEnum } from '../../schemas.ts';

const HEX64 = '^[0-9a-f]{64}$';

const nullable = <T extends TSchema>(t: T) => Type.Union([t, Type.Null()]);

// ---------------------------------------------------------------------------------------------
// Examples: one agent with one record, with its real hashes

const EX_HANDLE = 'momentum-bot';
const EX_ID = 'dec_01JX0Z6Q4M8T2V7B3N5C9D1F0G';
const EX_CONTENT = '{"action":"BUY","agent":"momentum-bot","asset_class":"US_EQUITY","canon":"canon_v1","currency":"USD","quantity":"150","symbol":"AAPL","thesis":"Breakout above the 200-day average.","type":"decision"}';
const EX_ENTRY = {
  agent: EX_HANDLE,
  canon: 'canon_v1',
  content_hash: sha256Hex(EX_CONTENT),
  id: EX_ID,
  prev_hash: '0'.repeat(64),
  recorded_at: '2025-06-02T12:00:00.123Z',
  seq: '1',
  type: 'decision',
};
const EX_CHAIN_HASH = sha256Hex(canonicalJson(EX_ENTRY));
const EX_RECORD = { entry: EX_ENTRY, chain_hash: EX_CHAIN_HASH, content: EX_CONTENT, document: JSON.parse(EX_CONTENT) as object };
const EX_HEAD = { seq: 1, chain_hash: EX_CHAIN_HASH, recorded_at: EX_ENTRY.recorded_at };
const EX_KEY = {
  id: 'aid_01JX0Y2W4S6V8Z0B2D4F6H8K0M',
  public_key: '11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo',
  label: 'production signer',
  created_at: '2025-06-01T09:00:00.000Z',
  revoked_at: null,
  status: 'active',
};

// ---------------------------------------------------------------------------------------------
// Pieces

export const HeadView = Type.Object({
  seq: Type.Integer({ description: 'chain_seq of the newest record; 0 for an empty chain.' }),
  chain_hash: Type.String({ pattern: HEX64, description: 'chain_hash of the newest record (64 zeros for an empty chain). Pin it.' }),
  recorded_at: nullable(Type.String({ pattern: RECORDED_AT_PATTERN })),
}, { description: 'The chain head.' });

export const PublicKeyView = Type.Object({
  id: Type.String({ description: 'The key_id that signatures name.' }),
  public_key: Type.String({ description: 'Raw 32-byte Ed25519 public key, base64url without padding.' }),
  label: Type.String(),
  created_at: Type.String({ format: 'date-time' }),
  revoked_at: nullable(Type.String({ format: 'date-time' })),
  status: stringEnum(['active', 'revoked'] as const),
}, { description: 'An agent signing key (public half). A signature verifies only if the key was not revoked before the record\'s recorded_at.' });

export const ChainEntry = Type.Object({
  canon: Type.Literal('canon_v1'),
  agent: Type.String({ description: 'The agent handle.' }),
  seq: Type.String({ pattern: '^[1-9][0-9]*$', description: 'chain_seq as a decimal string.' }),
  id: Type.String({ pattern: RECORD_ID_PATTERN }),
  type: stringEnum(['decision', 'execution', 'activity'] as const),
  recorded_at: Type.String({ pattern: RECORDED_AT_PATTERN }),
  content_hash: Type.String({ pattern: HEX64 }),
  prev_hash: Type.String({ pattern: HEX64, description: 'chain_hash of the previous record; 64 zeros for seq 1.' }),
  signature: Type.Optional(Type.Object({ key_id: Type.String(), nonce: Type.String(), signature: Type.String() })),
}, {
  description: 'The canon_v1 §4 chain entry, exactly: chain_hash = sha256(canon_v1(entry)). It is written in canon_v1 form, so its bytes in the response are the hashed bytes.',
});

export const RecordView = Type.Object({
  entry: ChainEntry,
  chain_hash: Type.String({ pattern: HEX64 }),
  content: Type.Optional(Type.String({ description: 'canon_v1(content document) as a string: content_hash = sha256 of its UTF-8 bytes. Omitted with payloads=false.' })),
  document: Type.Optional(Type.Object({}, { additionalProperties: true, description: 'The same content parsed, for convenience. Verify against content, not this.' })),
}, { description: 'One record: everything needed to recompute its content_hash and chain_hash.' });

export const LedgerItem = Type.Composite([RecordView, Type.Object({ proof_url: Type.String({ format: 'uri' }) })]);

// ---------------------------------------------------------------------------------------------
// Queries

export const HandleParams = Type.Object({ handle: Type.String({ description: 'The agent handle.' }) });

export const ChainQuery = Type.Object({
  payloads: Type.Boolean({ default: true, description: 'Include each record\'s content (default true).' }),
  limit: Type.Integer({ minimum: 1, maximum: 2000, default: 500, description: 'Records per page: at most 2000, default 500.' }),
  after_seq: Type.Integer({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER, default: 0, description: 'Page start: records with seq greater than this. Take it from next_after_seq of the previous page.' }),
}, { additionalProperties: false });

export const ProofParams = Type.Object({ record_id: Type.String({ description: 'A record id (dec_..., exe_... or act_...).' }) });

export const LedgerQuery = Type.Object({
  limit: Type.Integer({ minimum: 1, maximum: 200, default: 50, description: 'At most 200, default 50.' }),
  cursor: Type.Optional(Type.String({ pattern: RECORD_ID_PATTERN, description: 'A record id: the page holds records before it (older). Take it from next_cursor.' })),
  symbol: Type.Optional(Type.String({ minLength: 1, maxLength: 20, pattern: NO_CONTROL_CHARACTERS, description: 'Only records about this symbol.' })),
  agent: Type.Optional(Type.String({ pattern: HANDLE_PATTERN, description: 'Only this agent\'s records (its handle).' })),
  type: Type.Optional(stringEnum(['decision', 'execution', 'activity'] as const, { description: 'Only this record type.' })),
  include_demo: Type.Boolean({ default: false, description: 'Include demo agents\' records (default false: hidden).' }),
}, { additionalProperties: false });

/** GET /v1/transparency takes no parameter: an unknown one is refused, as on every public read. */
export const TransparencyQuery = Type.Object({}, { additionalProperties: false });

export const ExportQuery = Type.Object({
  agent: Type.String({ pattern: HANDLE_PATTERN, description: 'The agent handle.' }),
}, { additionalProperties: false });

// ---------------------------------------------------------------------------------------------
// Responses

export const ProfileResponse = Type.Object({
  object: Type.Literal('agent_profile'),
  id: Type.String({ description: 'The public id of an agent is its handle.' }),
  handle: Type.String(),
  display_name: nullable(Type.String()),
  status: stringEnum(AGENT_STATUSES),
  demo: Type.Boolean({ description: 'A demo agent\'s records are hidden from /v1/ledger unless include_demo=true.' }),
  created_at: Type.String({ format: 'date-time' }),
  chain: Type.Object({ head: HeadView, url: Type.String({ format: 'uri' }), export_url: Type.String({ format: 'uri' }) }),
  counts: Type.Object({
    records: Type.Integer(), decision: Type.Integer(), execution: Type.Integer(),
    activity: Type.Integer({ description: 'Non-trade broker activities (dividends, splits, deposits, withdrawals, fees...).' }),
    signed: Type.Integer({ description: 'Agent-signed records.' }),
  }),
  signing_keys: Type.Array(PublicKeyView),
  portfolios: Type.Array(ProfilePortfolio, { description: 'The model and broker portfolios computed so far (docs/perf_v1.md); empty until one is, and a caveat says why.' }),
  performance: ProfilePerformance,
  caveats: Type.Array(Type.Object({ code: Type.String(), message: Type.String() }), { description: 'What this profile does not show or prove.' }),
}, {
  description: 'The public profile of an agent.',
  examples: [{
    object: 'agent_profile', id: EX_HANDLE, handle: EX_HANDLE, display_name: 'Momentum Bot', status: 'active', demo: false,
    created_at: '2025-06-01T08:00:00.000Z',
    chain: { head: EX_HEAD, url: `https://ledger.example/v1/agents/${EX_HANDLE}/chain`, export_url: `https://ledger.example/v1/export?agent=${EX_HANDLE}` },
    counts: { records: 1, decision: 1, execution: 0, signed: 0 },
    signing_keys: [EX_KEY],
    portfolios: [],
    performance: null,
    caveats: [{ code: 'performance_not_computed', message: 'No performance is computed for this agent yet: performance is null. Nothing on this profile states a return.' }],
  }],
});

export const ChainResponse = Type.Object({
  object: Type.Literal('chain'),
  canonicalisation: Type.Literal('canon_v1'),
  algorithm: Type.Literal('sha256'),
  agent: Type.String(),
  head: HeadView,
  keys: Type.Array(PublicKeyView, { description: 'Every signing key of the agent, to verify signed records.' }),
  payloads: Type.Boolean(),
  limit: Type.Integer(),
  after_seq: Type.Integer(),
  records: Type.Array(RecordView, { description: 'Ascending by seq, starting at after_seq + 1, never past `head`.' }),
  has_more: Type.Boolean(),
  next_after_seq: Type.Union([Type.Integer(), Type.Null()], { description: 'Pass as after_seq for the next page; null on the last page.' }),
  next: nullable(Type.String({ format: 'uri', description: 'The next page\'s URL; null on the last page.' })),
}, {
  description: 'One page of an agent\'s hash chain, oldest first. Walk pages with next_after_seq until has_more is false; the last page ends at the head it reports.',
  examples: [{
    object: 'chain', canonicalisation: 'canon_v1', algorithm: 'sha256', agent: EX_HANDLE, head: EX_HEAD, keys: [EX_KEY],
    payloads: true, limit: 500, after_seq: 0, records: [EX_RECORD], has_more: false, next_after_seq: null, next: null,
  }],
});

const B64_HASH = Type.String({ pattern: '^[A-Za-z0-9+/]{43}=$' });

/** Only with a witness policy (docs/witnesses.md): whether a checkpoint's cosignatures satisfy its quorum. */
export const WitnessedView = Type.Object({
  quorum_satisfied: Type.Boolean({ description: 'The cosignatures on the checkpoint satisfy the policy\'s quorum.' }),
  cosigned_by: Type.Array(Type.String(), { description: 'The policy names of the witnesses whose verified cosignature is on the checkpoint.' }),
}, { description: 'Present only when the service has a witness policy (LEDGER_WITNESS_POLICY): which witnesses cosigned the checkpoint (their signature lines follow the log\'s in `checkpoint`) and whether that satisfies the quorum. A checkpoint is cosigned within seconds of being signed; a fresh one may not be yet.' });

const WitnessesView = Type.Object({
  quorum: Type.String({ description: 'The policy\'s quorum, in words.' }),
  checkpoint: nullable(WitnessedView),
  witnesses: Type.Array(Type.Object({
    name: Type.String({ description: 'The witness\'s name in the policy.' }),
    vkey: Type.String({ description: 'Its cosigner vkey (C2SP tlog-cosignature, type 0x04).' }),
    last_cosigned_size: nullable(Type.Integer({ description: 'The largest tree size it cosigned.' })),
    last_cosigned_at: nullable(Type.String({ format: 'date-time', description: 'That cosignature\'s timestamp (the witness\'s clock).' })),
    last_error: nullable(Type.String({ description: 'Why the last attempt failed; null once it cosigns again.' })),
    last_error_at: nullable(Type.String({ format: 'date-time' })),
    failures: Type.Integer({ description: 'Consecutive failed attempts (0 while it cosigns).' }),
    next_attempt_at: nullable(Type.String({ format: 'date-time', description: 'While failing: when it is asked again (backoff).' })),
  })),
}, { description: 'Present only when the service has a witness policy (docs/witnesses.md): the quorum, whether the published checkpoint satisfies it, and each witness\'s state.' });

/** log_v1 §4. */
export const InclusionProofView = Type.Object({
  log_index: Type.Integer({ description: 'The record\'s zero-based index in the global log.' }),
  tree_size: Type.Integer({ description: 'The size of the checkpoint the proof leads to.' }),
  hashes: Type.Array(B64_HASH, { description: 'The inclusion path, the leaf\'s sibling first (standard base64). The leaf hash is SHA-256(0x00 || canon_v1(record.entry)).' }),
  checkpoint: Type.String({ description: 'The signed checkpoint (C2SP tlog-checkpoint) whose root the path leads to; its signature verifies under the log vkey on /v1/transparency.' }),
  tlog_proof: Type.String({ description: 'The same proof as C2SP tlog-proof@v1 text.' }),
  witnessed: Type.Optional(WitnessedView),
}, { description: 'The record\'s inclusion proof in the latest checkpoint of the global log (log_v1 §4). null until the log integrates the record (within about a second).' });

export const ProofResponse = Type.Object({
  object: Type.Literal('proof'),
  canonicalisation: Type.Literal('canon_v1'),
  algorithm: Type.Literal('sha256'),
  id: Type.String(),
  agent: Type.Object({
    handle: Type.String(),
    status: nullable(stringEnum(AGENT_STATUSES)),
    demo: Type.Boolean(),
    head: HeadView,
  }, { description: 'The agent and its current chain head (the record is at or before it).' }),
  key: Type.Union([Type.Composite([PublicKeyView, Type.Object({ valid_for_record: Type.Boolean({ description: 'Not revoked before the record\'s recorded_at.' }) })]), Type.Null()], {
    description: 'For an agent-signed record: the key named by entry.signature.key_id. null for unsigned records.',
  }),
  inclusion_proof: nullable(InclusionProofView),
  inclusion_pending: Type.Optional(nullable(Type.Object({
    status: Type.Literal('pending'),
    retry_after_seconds: Type.Integer({ description: 'Look again after this many seconds.' }),
    message: Type.String(),
  }, { description: 'While inclusion_proof is null: the record waits for the global log\'s integrator, and when to look again.' }))),
  anchor_proof: nullable(Type.Composite([AnchorView, Type.Object({
    checkpoint: nullable(Type.String({ description: 'The signed checkpoint of that tree size.' })),
    ots: Type.String({ description: 'The .ots file, base64.' }),
  })], { description: 'The Bitcoin anchor of the smallest anchored checkpoint covering the record (a confirmed one when there is one); null until one is. Check it with `ledger verify <file>.ots`.' })),
  price_observation: Type.Union([PriceObservationView, Type.Null()], {
    description: 'A decision\'s price at receipt (rule 6); null for an execution and for a decision not observed yet (the pricing job runs after the record). With no market-data provider configured, a decision not observed is `unpriced` with reason `not_configured: …`, and its proof is settled once the record is in the global log.',
  }),
  links: Type.Object({ self: Type.String({ format: 'uri' }), chain_from_here: Type.String({ format: 'uri' }), export: Type.String({ format: 'uri' }) }),
  record: RecordView,
}, {
  description: 'One record with everything needed to verify it alone: sha256(content) = entry.content_hash; sha256(canon_v1(entry)) = chain_hash; entry.prev_hash links to the previous record (64 zeros for seq 1); the signature, if any, verifies over content under key.public_key.',
  examples: [{
    object: 'proof', canonicalisation: 'canon_v1', algorithm: 'sha256', id: EX_ID,
    agent: { handle: EX_HANDLE, status: 'active', demo: false, head: EX_HEAD },
    key: null, inclusion_proof: null, anchor_proof: null, price_observation: null,
    links: {
      self: `https://ledger.example/v1/proof/${EX_ID}`,
      chain_from_here: `https://ledger.example/v1/agents/${EX_HANDLE}/chain`,
      export: `https://ledger.example/v1/export?agent=${EX_HANDLE}`,
    },
    record: EX_RECORD,
  }],
});

export const LedgerResponse = Type.Object({
  object: Type.Literal('list'),
  url: Type.Literal('/v1/ledger'),
  data: Type.Array(LedgerItem, { description: 'Newest first by id.' }),
  has_more: Type.Boolean(),
  next_cursor: nullable(Type.String({ description: 'The last id of this page: pass as cursor for the next (older) page; null on the last page.' })),
  next: nullable(Type.String({ format: 'uri', description: 'The next page\'s URL with the same filters; null on the last page.' })),
}, {
  description: 'A page of every agent\'s records, newest first. Page with next_cursor: records recorded while you page appear only before your first page, so a walk sees every record that existed when it started exactly once.',
  examples: [{
    object: 'list', url: '/v1/ledger',
    data: [{ ...EX_RECORD, proof_url: `https://ledger.example/v1/proof/${EX_ID}` }],
    has_more: false, next_cursor: null, next: null,
  }],
});

export const TransparencyResponse = Type.Object({
  object: Type.Literal('transparency'),
  generated_at: Type.String({ format: 'date-time' }),
  canonicalisation: Type.Literal('canon_v1'),
  algorithm: Type.Literal('sha256'),
  counts: Type.Object({
    agents: Type.Integer(), demo_agents: Type.Integer(), records: Type.Integer(),
    decision: Type.Integer(), execution: Type.Integer(), activity: Type.Integer(), signed: Type.Integer(),
  }),
  heads: Type.Array(Type.Object({
    agent: Type.String(), demo: Type.Boolean(), status: Type.String(),
    seq: Type.Integer(), chain_hash: Type.String({ pattern: HEX64 }), recorded_at: nullable(Type.String()),
  }), { description: 'The chain head of every agent, by handle: pin them.' }),
  anchoring: Type.Object({
    live: Type.Boolean(),
    anchored_roots: Type.Integer({ description: 'Checkpoints whose anchor is confirmed in a Bitcoin block.' }),
    pending_roots: Type.Integer({ description: 'Checkpoints timestamped on the calendars, waiting for a block.' }),
    latest_confirmed: nullable(AnchorView),
    latest_pending: nullable(AnchorView),
    calendars_unreachable_since: nullable(Type.String({ format: 'date-time', description: 'Since when no OpenTimestamps calendar answers; null while they do.' })),
    anchors_url: Type.String({ format: 'uri' }),
    note: Type.String(),
  }, { description: 'Bitcoin anchoring (OpenTimestamps) of the global log\'s checkpoints (log_v1 §5).' }),
  guarantees: Type.Array(Type.Object({ name: Type.String(), covers: Type.String(), does_not_cover: Type.String() })),
  how_to_verify: Type.String(),
  log: Type.Object({
    vkey: nullable(Type.String({ description: 'The log\'s verifier key (signed-note vkey: <origin>+<key id hex>+<base64(0x01 || Ed25519 public key)>).' })),
    checkpoint: nullable(Type.String({ description: 'The latest signed checkpoint; null while the log is empty.' })),
    tree_size: Type.Integer(),
    checkpoint_at: nullable(Type.String({ format: 'date-time' })),
    checkpoint_url: Type.String({ format: 'uri' }),
    tiles_url: Type.String({ format: 'uri' }),
    witnesses: Type.Optional(WitnessesView),
  }, { description: 'The global log (log_v1): every record of every agent in one Merkle tree, with signed checkpoints. Pin a checkpoint; later ones must be consistent with it.' }),
}, {
  description: 'Chain heads to pin, counts, anchoring, and what each guarantee covers and does not.',
  examples: [{
    object: 'transparency', generated_at: '2025-06-09T15:31:00.000Z', canonicalisation: 'canon_v1', algorithm: 'sha256',
    counts: { agents: 1, demo_agents: 0, records: 1, decision: 1, execution: 0, signed: 0 },
    heads: [{ agent: EX_HANDLE, demo: false, status: 'active', ...EX_HEAD }],
    anchoring: { live: true, anchored_roots: 0, pending_roots: 0, latest_confirmed: null, latest_pending: null, calendars_unreachable_since: null, anchors_url: 'https://ledger.example/v1/anchors', note: 'No checkpoint is anchored yet.' },
    guarantees: GUARANTEES.slice(0, 1),
    how_to_verify: 'Pin the heads above ...',
    log: {
      vkey: 'ledger.example/log+7cc83a9d+AYqI4910CfGV/VLbLTy6XXLKZwm/HZQSG/N0iAG0D29c',
      checkpoint: 'ledger.example/log\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n\n\u2014 ledger.example/log fMg6nSLQR+K7uFTmQpjtK7iXqXt6vAc7ywcotZTJTMr+a+ovx7Gw8UgdvYgA416zdkfVfqHapPSwoXtpbM05KFOu5wM=\n',
      tree_size: 8,
      checkpoint_at: '2025-06-09T15:30:59.750Z',
      checkpoint_url: 'https://ledger.example/v1/log/checkpoint',
      tiles_url: 'https://ledger.example/v1/log/tile/',
    },
  }],
});

export const EXPORT_DESCRIPTION = [
  'The complete export of one agent\'s records, for mirroring: NDJSON (`application/x-ndjson`), streamed.',
  'Line 1 is the header: `{"object":"export","format":"ledger-export-ndjson-v1","canonicalisation":"canon_v1","algorithm":"sha256","agent":{...},"keys":[...],"head":{"seq","chain_hash","recorded_at"},"records":N,"chain_url":...}`.',
  'Then one line per record, ascending by seq from 1 to head.seq: `{"entry":{...canon_v1 chain entry...},"chain_hash":"...","content":"<canon_v1 content string>"}`.',
  'A decision line whose price at receipt was observed also carries `price_observation` (the PriceObservation schema, as on `/v1/proof`); without it, none was observed yet. The `not_configured` answer of a node without a market-data provider is on the proof only. It is not hashed. The header\'s `price_observations` counts the exported records that had one when the export started (lines may carry a few more observed meanwhile).',
  'The export stops at the head read when it started; records recorded meanwhile are in the next export.',
  'Check it with `ledger verify <file>`: every line\'s hashes, the links, and that the last line is the header\'s head.',
].join('\n\n');
