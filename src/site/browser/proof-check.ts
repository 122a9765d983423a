// Verify in this browser: checks one proof bundle (GET /v1/proof/<id>) with the code
// `ledger verify` runs (src/verify: the record's form, content hash, chain hash and signature
// through the canon_v1 core; the checkpoint's signature and the inclusion proof), and checks
// the two hashes and the signature once more with the browser's own WebCrypto where it has it.
// Pure apart from WebCrypto (given, or null): runs in the browser bundle and under Node's tests.
import { canonicalJson, type CanonValue } from '../../core/canon.ts';
import { b64urlDecode } from '../../core/base64url.ts';
import { parseVkey, type Vkey } from '../../core/note.ts';
import { verifyBundleInclusion, type LogCheck } from '../../verify/proof.ts';
import { verifyRaw } from '../../core/ed25519.ts';
import { checkWitnessed, parseWitnessPolicy } from '../../core/witness-policy.ts';
import { verifyChunk, type CheckName, type ChunkResult } from '../../verify/records.ts';

export type Check = { name: string; label: string; ok: boolean | null; detail: string };
/** A witness as /v1/transparency lists it (log.witnesses.witnesses). */
export type PublishedWitness = { name: string; vkey: string };

export type ProofVerdict = { ok: boolean; checks: Check[]; engines: { sha256: string; ed25519: string } };

type Bundle = {
  id: string;
  agent: { handle: string; head: { seq: number; chain_hash: string } };
  key: { id: string; public_key: string; revoked_at: string | null } | null;
  inclusion_proof: unknown;
  anchor_proof: { status?: string; tree_size?: number; block_height?: number | null } | null;
  record: { entry: Record<string, unknown> & { seq?: string; content_hash?: string; signature?: { key_id: string; signature: string } }; chain_hash: string; content: string };
};

const encoder = new TextEncoder();
const hex = (b: ArrayBuffer) => [...new Uint8Array(b)].map((x) => x.toString(16).padStart(2, '0')).join('');

/** Detail of the first failure of these checks, or null when all passed. */
function failed(chunk: ChunkResult, names: CheckName[]): string | null {
  const f = chunk.failures.find((x) => (names as string[]).includes(x.name));
  if (f) return `${f.name}: ${f.detail}`;
  const bad = names.find((n) => chunk.tallies[n].failed > 0);
  return bad ? `${bad} failed` : null;
}

type WebCryptoChecks = { content: boolean | null; chain: boolean | null; signature: boolean | null; ed25519: boolean };

/** The record's two hashes, and its signature when the browser has Ed25519, by WebCrypto. Nulls where it cannot. */
async function webCryptoChecks(subtle: SubtleCrypto | null, b: Bundle): Promise<WebCryptoChecks> {
  const none: WebCryptoChecks = { content: null, chain: null, signature: null, ed25519: false };
  if (!subtle) return none;
  const r = b.record;
  let content: boolean | null = null;
  let chain: boolean | null = null;
  try {
    content = hex(await subtle.digest('SHA-256', encoder.encode(r.content))) === r.entry.content_hash;
    chain = hex(await subtle.digest('SHA-256', encoder.encode(canonicalJson(r.entry as CanonValue)))) === r.chain_hash;
  } catch {
    return none;
  }
  const sig = r.entry.signature;
  if (!sig || !b.key) return { content, chain, signature: null, ed25519: false };
  const pub = b64urlDecode(b.key.public_key);
  const signature = b64urlDecode(sig.signature);
  if (!pub || !signature) return { content, chain, signature: false, ed25519: false };
  try {
    const key = await subtle.importKey('raw', Uint8Array.from(pub), { name: 'Ed25519' }, false, ['verify']);
    return { content, chain, signature: await subtle.verify({ name: 'Ed25519' }, key, Uint8Array.from(signature), encoder.encode(r.content)), ed25519: true };
  } catch {
    return { content, chain, signature: null, ed25519: false }; // no Ed25519 in this browser's WebCrypto
  }
}

function agree(core: string | null, web: boolean | null, what: string): { ok: boolean; detail: string | null } {
  if (core !== null) return { ok: false, detail: core };
  if (web === false) return { ok: false, detail: `WebCrypto disagrees: ${what}` };
  return { ok: true, detail: null };
}

/**
 * The witnesses' cosignatures on the bundle's checkpoint, each checked here under the vkey the
 * service lists; the bundle's claim (`witnessed.cosigned_by`) must match what verifies.
 */
function witnessesCheck(b: Bundle, witnesses: PublishedWitness[]): Check | null {
  const inc = b.inclusion_proof as { checkpoint?: unknown; witnessed?: { quorum_satisfied?: unknown; cosigned_by?: unknown } } | null;
  if (witnesses.length === 0 || !inc || typeof inc.checkpoint !== 'string') return null;
  const label = 'Witness cosignatures';
  const policy = parseWitnessPolicy(`${witnesses.map((w) => `witness ${w.name} ${w.vkey}`).join('\n')}\nquorum none\n`);
  if (!policy.ok) return { name: 'witnesses', label, ok: false, detail: `the witnesses listed on /v1/transparency do not parse: ${policy.error}` };
  const r = checkWitnessed(inc.checkpoint, policy.value, verifyRaw);
  if (!r) return { name: 'witnesses', label, ok: false, detail: 'the checkpoint is not a signed note' };
  const claimed = Array.isArray(inc.witnessed?.cosigned_by) ? (inc.witnessed.cosigned_by as unknown[]).map(String) : [];
  const verified = r.cosigned.map((c) => c.witness);
  const by = r.cosigned.map((c) => `${c.witness} (${new Date(c.time * 1000).toISOString()})`).join(', ');
  if (r.invalid.length > 0) return { name: 'witnesses', label, ok: false, detail: `a cosignature does not verify: ${r.invalid.map((i) => `${i.witness}: ${i.error}`).join('; ')}` };
  const unproven = claimed.filter((n) => !verified.includes(n));
  if (unproven.length > 0) return { name: 'witnesses', label, ok: false, detail: `the service says ${unproven.join(', ')} cosigned, but no such cosignature is on the checkpoint` };
  if (verified.length === 0) return { name: 'witnesses', label, ok: null, detail: `not cosigned yet by ${r.missing.join(', ')} (a checkpoint is cosigned within seconds: verify again shortly)` };
  const quorum = inc.witnessed?.quorum_satisfied === true ? 'the service says the quorum is met' : 'the service says the quorum is not met yet';
  return { name: 'witnesses', label, ok: true, detail: `cosigned by ${by}, each verified here${r.missing.length ? `; not yet by ${r.missing.join(', ')}` : ''}; ${quorum}` };
}

function logCheck(checks: LogCheck[], name: string): LogCheck | null {
  return checks.find((c) => c.name === name) ?? null;
}

/**
 * Verifies a proof bundle (its JSON text). `vkeyText` is the log's key as the service publishes
 * it on /v1/transparency (null: the checkpoint's signature is not checked, and says so).
 */
export async function checkProof(bundleText: string, vkeyText: string | null, subtle: SubtleCrypto | null, witnesses: PublishedWitness[] = []): Promise<ProofVerdict> {
  let b: Bundle;
  try {
    b = JSON.parse(bundleText) as Bundle;
    if (!b || typeof b !== 'object' || !b.record || !b.agent) throw new Error('not a proof bundle');
  } catch (e) {
    return { ok: false, engines: { sha256: '-', ed25519: '-' }, checks: [{ name: 'bundle', label: 'The proof bundle', ok: false, detail: `unreadable: ${(e as Error).message}` }] };
  }
  const key = b.key ? [{ id: b.key.id, public_key: b.key.public_key, revoked_at: b.key.revoked_at }] : [];
  const chunk = verifyChunk({ agent: b.agent.handle, keys: key, records: [b.record], pins: [], requireContent: true });
  const web = await webCryptoChecks(subtle, b);
  const checks: Check[] = [];

  const content = agree(failed(chunk, ['record_form', 'content_bytes', 'content_hash', 'content_envelope', 'document']), web.content, 'sha256 of the content is not content_hash');
  checks.push({ name: 'content_hash', label: 'Content hash', ok: content.ok, detail: content.detail ?? `sha256 of the content (canon_v1) is content_hash ${b.record.entry.content_hash}` });
  const chain = agree(failed(chunk, ['entry_members', 'chain_hash']), web.chain, 'sha256 of the chain entry is not chain_hash');
  checks.push({ name: 'chain_hash', label: 'Chain hash', ok: chain.ok, detail: chain.detail ?? `sha256 of the chain entry (canon_v1) is chain_hash ${b.record.chain_hash}` });

  if (b.record.entry.signature) {
    const sig = agree(failed(chunk, ['signature']), web.signature, 'the Ed25519 signature does not verify');
    checks.push({ name: 'signature', label: 'Agent signature', ok: sig.ok, detail: sig.detail ?? `Ed25519 signature over the content verifies under key ${b.record.entry.signature.key_id}, valid at recorded_at` });
  } else {
    checks.push({ name: 'signature', label: 'Agent signature', ok: null, detail: 'not signed by the agent: attested by the service alone' });
  }

  const seq = Number(b.record.entry.seq);
  const head = b.agent.head;
  const within = Number.isSafeInteger(seq) && (seq < head.seq || (seq === head.seq && b.record.chain_hash === head.chain_hash));
  checks.push({ name: 'head', label: 'In the agent\'s chain', ok: within, detail: within ? `seq ${seq}, covered by the agent's head (seq ${head.seq})` : `seq ${seq} is not covered by the published head (seq ${head.seq})` });

  const vkey = vkeyText ? parseVkey(vkeyText) : null;
  const log = await verifyBundleInclusion(b, { vkey: vkey?.ok ? (vkey.value as Vkey) : null, vkeyFrom: 'published on /v1/transparency', pins: [], consistency: null });
  const cp = logCheck(log, 'checkpoint');
  if (vkey && !vkey.ok) checks.push({ name: 'checkpoint', label: 'Checkpoint signature', ok: false, detail: `the published log key does not parse: ${vkey.error}` });
  else if (cp) checks.push({ name: 'checkpoint', label: 'Checkpoint signature', ok: cp.ok, detail: cp.summary });
  const inc = logCheck(log, 'inclusion_proof');
  if (inc) checks.push({ name: 'inclusion', label: 'Inclusion in the global log', ok: inc.ok, detail: inc.failures[0]?.detail ?? inc.summary });
  const cosigned = witnessesCheck(b, witnesses);
  if (cosigned) checks.push(cosigned);

  const a = b.anchor_proof;
  checks.push({
    name: 'anchor', label: 'Bitcoin anchor', ok: null,
    detail: a ? `${a.status ?? 'pending'} for the checkpoint of ${a.tree_size} records${a.block_height ? ` (block ${a.block_height})` : ''}; check the .ots file with \`ledger verify\` against block headers` : 'not anchored yet',
  });

  const required = ['content_hash', 'chain_hash', 'head'];
  const ok = checks.every((c) => c.ok !== false) && required.every((n) => checks.find((c) => c.name === n)?.ok === true);
  return {
    ok,
    checks,
    engines: {
      sha256: web.content === null ? 'JavaScript (@noble/hashes): WebCrypto is not available on this page' : 'the canon_v1 core (@noble/hashes), cross-checked by WebCrypto',
      ed25519: b.record.entry.signature ? (web.ed25519 ? 'the canon_v1 core (@noble/ed25519), cross-checked by WebCrypto' : 'JavaScript (@noble/ed25519): this browser has no Ed25519 in WebCrypto') : 'not needed',
    },
  };
}
