// The checks of a proof bundle that go beyond its record (log_v1 §6): the bundle's checkpoint is
// signed by the log, its inclusion_proof leads from the record's chain entry to the checkpoint's
// root, and a pinned checkpoint is consistent with it. Pure (fetch and the core only), so the
// client (src/client) runs it in a browser as `ledger verify` (log.ts, run.ts) runs it in Node.
import { b64Decode } from '../core/base64.ts';
import { canonicalJson, type CanonValue } from '../core/canon.ts';
import { verifyRaw } from '../core/ed25519.ts';
import { hashesEqual, leafHash, verifyConsistency, verifyInclusion, type Hash } from '../core/merkle.ts';
import { openCheckpoint, parseCheckpointBody, parseNote, parseVkey, type Checkpoint, type Vkey } from '../core/note.ts';
import { parseTlogProof } from '../core/tlog-proof.ts';
import { checkWitnessed, describeQuorum, type WitnessPolicy } from '../core/witness-policy.ts';
import type { Failure } from './records.ts';

/** One printed check: ok true / false, or null for a note (nothing to check). */
export type LogCheck = { name: string; ok: boolean | null; summary: string; failures: Failure[] };

const encoder = new TextEncoder();

export type PinnedCheckpoint = { path: string; note: string; checkpoint: Checkpoint };

/** The log's vkey as its service publishes it on /transparency (base_url = the API base). */
export async function publishedVkey(baseUrl: string, fetcher: typeof fetch): Promise<Vkey | null> {
  try {
    const res = await fetcher(`${baseUrl}/transparency`, { headers: { accept: 'application/json' } });
    if (res.status !== 200) return null;
    const doc = (await res.json()) as { log?: { vkey?: unknown } };
    const vkey = typeof doc.log?.vkey === 'string' ? parseVkey(doc.log.vkey) : null;
    return vkey?.ok ? vkey.value : null;
  } catch {
    return null;
  }
}

/** Checks a checkpoint's signature (when a vkey is known) and returns its body. */
export function checkpointCheck(note: string, vkey: Vkey | null, vkeyFrom: string, what: string): { check: LogCheck; checkpoint: Checkpoint | null } {
  const parsed = parseNote(note);
  const body = parsed.ok ? parseCheckpointBody(parsed.value.text) : parsed;
  if (!body.ok) return { check: { name: 'checkpoint', ok: false, summary: `${what} is not a log_v1 signed checkpoint: ${body.error}`, failures: [] }, checkpoint: null };
  if (!vkey) {
    return { check: { name: 'checkpoint', ok: null, summary: `${what} (size ${body.value.size}) parses, but its signature is not checked: no vkey (pass --vkey)`, failures: [] }, checkpoint: body.value };
  }
  const opened = openCheckpoint(note, vkey, verifyRaw);
  return opened.ok
    ? { check: { name: 'checkpoint', ok: true, summary: `${what} (${body.value.origin}, size ${body.value.size}) is signed by the log key (${vkeyFrom})`, failures: [] }, checkpoint: body.value }
    : { check: { name: 'checkpoint', ok: false, summary: `${what} does not verify under the log key (${vkeyFrom}): ${opened.error}`, failures: [] }, checkpoint: body.value };
}

/**
 * The witness check of a checkpoint under a policy (`--witness-policy`, `--witness` and `--quorum`):
 * it passes only when its cosignatures by the policy's witnesses verify and satisfy the quorum.
 */
export function witnessCheck(note: string, policy: WitnessPolicy, what: string): LogCheck {
  const quorum = describeQuorum(policy);
  const r = checkWitnessed(note, policy, verifyRaw);
  if (!r) return { name: 'witnesses', ok: false, summary: `${what} is not a signed note, so no cosignature can be checked`, failures: [] };
  const failures: Failure[] = r.invalid.map((i) => ({ name: 'witnesses', where: what, detail: `${i.witness}: ${i.error}` }));
  const by = r.cosigned.length === 0 ? 'no witness of the policy' : r.cosigned.map((c) => `${c.witness} (at ${new Date(c.time * 1000).toISOString()})`).join(', ');
  if (r.satisfied && failures.length === 0) return { name: 'witnesses', ok: true, summary: `${what} is cosigned by ${by}: the quorum (${quorum}) holds`, failures };
  if (!r.satisfied) failures.push({ name: 'witnesses', where: what, detail: `cosigned by ${by}; not by ${r.missing.join(', ') || 'none missing'}: the quorum (${quorum}) does not hold` });
  return { name: 'witnesses', ok: false, summary: `${what} is refused: it does not carry valid cosignatures satisfying the witness policy (${quorum})`, failures };
}

type InclusionProof = { log_index: number; tree_size: number; hashes: string[]; checkpoint: string; tlog_proof: string };

function asInclusion(v: unknown): InclusionProof | null {
  const p = v as InclusionProof;
  const ok = typeof v === 'object' && v !== null && Number.isSafeInteger(p.log_index) && Number.isSafeInteger(p.tree_size) &&
    Array.isArray(p.hashes) && p.hashes.every((h) => typeof h === 'string') && typeof p.checkpoint === 'string' && typeof p.tlog_proof === 'string';
  return ok ? p : null;
}

/**
 * The log checks of a proof bundle. `consistency` fetches a consistency proof between two sizes
 * (null when the bundle came from a file and no service is at hand).
 */
export async function verifyBundleInclusion(
  bundle: { id: string; record: unknown; inclusion_proof: unknown },
  options: {
    vkey: Vkey | null;
    vkeyFrom: string;
    pins: PinnedCheckpoint[];
    consistency: ((from: number, to: number) => Promise<Hash[] | null>) | null;
    /** When given, the bundle's checkpoint must satisfy it (witnessCheck). */
    witnessPolicy?: WitnessPolicy | null;
  },
): Promise<LogCheck[]> {
  if (bundle.inclusion_proof === null || bundle.inclusion_proof === undefined) {
    const checks: LogCheck[] = [{ name: 'inclusion_proof', ok: null, summary: 'none in the bundle: the global log has not included this record yet (look again shortly)', failures: [] }];
    for (const pin of options.pins) checks.push({ name: 'pinned_checkpoint', ok: null, summary: `${pin.path}: nothing to compare it with until the record is in a checkpoint`, failures: [] });
    if (options.witnessPolicy) checks.push({ name: 'witnesses', ok: false, summary: 'a witness policy is required, and the bundle has no checkpoint to check it on', failures: [] });
    return checks;
  }
  const proof = asInclusion(bundle.inclusion_proof);
  const where = `record ${bundle.id}`;
  if (!proof) return [{ name: 'inclusion_proof', ok: false, summary: 'the bundle\'s inclusion_proof is malformed', failures: [{ name: 'inclusion_proof', where, detail: 'expected {log_index, tree_size, hashes, checkpoint, tlog_proof}' }] }];

  const { check: signature, checkpoint } = checkpointCheck(proof.checkpoint, options.vkey, options.vkeyFrom, 'the bundle\'s checkpoint');
  const checks: LogCheck[] = [signature];
  if (options.witnessPolicy) checks.push(witnessCheck(proof.checkpoint, options.witnessPolicy, 'the bundle\'s checkpoint'));
  const entry = (bundle.record as { entry?: unknown } | null)?.entry;
  const failures: Failure[] = [];
  const at = `${where} at log index ${proof.log_index}`;
  if (checkpoint) {
    const hashes = proof.hashes.map((h) => b64Decode(h));
    const leaf = leafHash(encoder.encode(canonicalJson(entry as CanonValue)));
    if (hashes.some((h) => h === null || h.length !== 32)) failures.push({ name: 'inclusion_proof', where: at, detail: 'a proof hash is not a base64 32-byte hash' });
    else if (proof.tree_size !== checkpoint.size) failures.push({ name: 'inclusion_proof', where: at, detail: `tree_size ${proof.tree_size} is not the checkpoint's size ${checkpoint.size}` });
    else {
      const v = verifyInclusion({ index: proof.log_index, size: checkpoint.size, leafHash: leaf, proof: hashes as Hash[], root: checkpoint.root });
      if (!v.ok) failures.push({ name: 'inclusion_proof', where: at, detail: `the record's chain entry is not in the checkpoint's tree: ${v.error}` });
    }
    const tlog = parseTlogProof(proof.tlog_proof);
    if (!tlog.ok) failures.push({ name: 'inclusion_proof', where: at, detail: `tlog_proof: ${tlog.error}` });
    else if (tlog.value.index !== proof.log_index || tlog.value.checkpoint !== proof.checkpoint ||
      tlog.value.hashes.length !== proof.hashes.length || tlog.value.hashes.some((h, i) => !hashesEqual(h, b64Decode(proof.hashes[i]!) ?? new Uint8Array()))) {
      failures.push({ name: 'inclusion_proof', where: at, detail: 'tlog_proof is not the same proof as log_index, hashes and checkpoint' });
    }
  }
  checks.push({ name: 'inclusion_proof', ok: checkpoint !== null && failures.length === 0, summary: `the record is log index ${proof.log_index} in the checkpoint of size ${proof.tree_size}`, failures });
  if (checkpoint) for (const pin of options.pins) checks.push(await pinnedAgainstProof(pin, checkpoint, options));
  return checks;
}

async function pinnedAgainstProof(
  pin: PinnedCheckpoint,
  latest: Checkpoint,
  options: { vkey: Vkey | null; consistency: ((from: number, to: number) => Promise<Hash[] | null>) | null },
): Promise<LogCheck> {
  const p = pin.checkpoint;
  const fail = (detail: string): LogCheck => ({ name: 'pinned_checkpoint', ok: false, summary: `checkpoint pinned in ${pin.path} (size ${p.size})`, failures: [{ name: 'pinned_checkpoint', where: pin.path, detail }] });
  if (options.vkey && !openCheckpoint(pin.note, options.vkey, verifyRaw).ok) return fail('its signature does not verify under the log key');
  if (p.origin !== latest.origin) return fail(`origin ${p.origin} is not the bundle's ${latest.origin}`);
  const [older, newer] = p.size <= latest.size ? [p, latest] : [latest, p];
  if (older.size === newer.size) {
    return hashesEqual(older.root, newer.root)
      ? { name: 'pinned_checkpoint', ok: true, summary: `the pinned checkpoint is the bundle's (size ${p.size})`, failures: [] }
      : fail(`same size ${p.size} as the bundle's checkpoint but a different root: two histories`);
  }
  if (!options.consistency) {
    return { name: 'pinned_checkpoint', ok: null, summary: `${pin.path} (size ${p.size}): checking it against the bundle's checkpoint (size ${latest.size}) needs a consistency proof; verify the bundle by URL, or the log (<base_url>/log) with --pin`, failures: [] };
  }
  const proof = await options.consistency(older.size, newer.size);
  if (!proof) return fail(`the service gave no consistency proof from ${older.size} to ${newer.size}`);
  const v = verifyConsistency({ size1: older.size, size2: newer.size, root1: older.root, root2: newer.root, proof });
  return v.ok
    ? { name: 'pinned_checkpoint', ok: true, summary: `the pinned checkpoint (size ${p.size}) and the bundle's (size ${latest.size}) are consistent`, failures: [] }
    : fail(`no consistent history from size ${older.size} to ${newer.size}: ${v.error}`);
}

/** The consistency proof the service at baseUrl gives; null when it gives none. */
export async function fetchConsistency(baseUrl: string, from: number, to: number, fetcher: typeof fetch): Promise<Hash[] | null> {
  try {
    const res = await fetcher(`${baseUrl}/log/proof/consistency?from=${from}&to=${to}`);
    if (res.status !== 200) return null;
    const body = (await res.json()) as { hashes?: unknown };
    if (!Array.isArray(body.hashes)) return null;
    const hashes = body.hashes.map((h) => (typeof h === 'string' ? b64Decode(h) : null));
    return hashes.every((h) => h !== null) ? (hashes as Hash[]) : null;
  } catch {
    return null;
  }
}
