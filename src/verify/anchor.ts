// `ledger verify` of anchors (log_v1 §6 step 5): an `.ots` file (path or URL), or the
// `anchor_proof` of a proof bundle, replayed up to Bitcoin block headers given as files
// (`--header`, 80 bytes raw or 160 hex) or fetched from an Esplora-style header source
// (`--headers-url`). Every check is printed with a verdict; failures name the anchor. Exit 0
// when every check passes, 1 when one fails, 2 when the input cannot be checked at all.
// Of the anchor wing it uses only the pieces without a job: the .ots codec, the check against a
// block header and the header source; the digest of a checkpoint comes from the core.
import { readFile } from 'node:fs/promises';
import { b64Decode } from '../core/base64.ts';
import { checkpointBodyDigest } from '../core/note.ts';
import { esploraHeaderSource } from './bitcoin-headers.ts';
import { parseDetachedFile, parseHex, toHex, type Result } from '../method/ots/codec.ts';
import { parseBlockHeader, verifyDetachedFile, type HeaderLookup } from '../method/ots/verify.ts';

export type AnchorCheckOptions = {
  headers?: string[];
  headersUrl?: string;
  /** a checkpoint (signed note) file the .ots must be for */
  checkpoint?: string;
  fetcher?: typeof fetch;
};

type Out = (line: string) => void;

const isUrl = (s: string) => /^https?:\/\//i.test(s);

async function readBytes(source: string, fetcher: typeof fetch): Promise<Result<Uint8Array, string>> {
  try {
    if (!isUrl(source)) return { ok: true, value: new Uint8Array(await readFile(source)) };
    const res = await fetcher(source);
    if (res.status !== 200) return { ok: false, error: `${source} answered ${res.status}` };
    return { ok: true, value: new Uint8Array(await res.arrayBuffer()) };
  } catch (e) {
    return { ok: false, error: `cannot read ${source}: ${(e as Error).message}` };
  }
}

/** Header files (raw 80 bytes or hex) found by the merkle root an attestation names, else null. */
async function headerLookup(options: AnchorCheckOptions): Promise<Result<{ lookup: HeaderLookup; from: string } | null, string>> {
  if (options.headersUrl) return { ok: true, value: { lookup: esploraHeaderSource(options.headersUrl, options.fetcher ? { fetch: options.fetcher } : {}).headerAt, from: options.headersUrl } };
  if (!options.headers?.length) return { ok: true, value: null };
  const headers: Uint8Array[] = [];
  for (const file of options.headers) {
    const raw = await readBytes(file, options.fetcher ?? fetch);
    if (!raw.ok) return raw;
    const bytes = raw.value.length === 80 ? raw.value : parseHex(new TextDecoder().decode(raw.value).trim());
    if (!bytes || !parseBlockHeader(bytes).ok) return { ok: false, error: `${file} is not an 80-byte block header (raw or hex)` };
    headers.push(bytes);
  }
  // A header file carries no height: each attestation is checked against every given header and
  // counts as confirmed when one matches (see runAnchorCheck for the ones no header matches).
  return { ok: true, value: { lookup: async () => ({ ok: true, value: headers[0]! }), from: options.headers.join(', ') } };
}

/** Checks one `.ots` (bytes) against the headers; `expected` binds it to a checkpoint body. */
export async function checkAnchor(name: string, ots: Uint8Array, expected: { digest: Uint8Array; what: string } | null, options: AnchorCheckOptions, out: Out): Promise<number> {
  const file = parseDetachedFile(ots);
  if (!file.ok) {
    out(`  FAIL ots_file          anchor ${name}: not an OpenTimestamps file: ${file.error.message}`);
    return 1;
  }
  if (file.value.hashOp !== 'sha256') {
    out(`  FAIL ots_file          anchor ${name}: the file hash op is ${file.value.hashOp}, not sha256`);
    return 1;
  }
  const headers = await headerLookup(options);
  if (!headers.ok) {
    out(`verdict: UNUSABLE INPUT: ${headers.error}`);
    return 2;
  }
  let failed = false;
  if (expected) {
    const ok = toHex(expected.digest) === toHex(file.value.digest);
    failed ||= !ok;
    out(`  ${ok ? 'ok  ' : 'FAIL'} anchor_digest     anchor ${name}: ${ok ? `timestamps SHA-256 of ${expected.what}` : `the file timestamps ${toHex(file.value.digest)}, not SHA-256 of ${expected.what} (${toHex(expected.digest)})`}`);
  } else {
    out(`  note anchor_digest     anchor ${name}: the file timestamps ${toHex(file.value.digest)} (give --checkpoint <file> to bind it to a checkpoint)`);
  }
  if (!headers.value) {
    out(`  note anchor_block      anchor ${name}: not checked against Bitcoin: give --header <file> or --headers-url <Esplora API URL>`);
    return failed ? 1 : 0;
  }
  const given = options.headers ?? [];
  const all = given.length > 0 ? await Promise.all(given.map(async (h) => (await headerLookup({ ...options, headers: [h] }))))
    : [];
  const lookups = all.length ? all.map((r) => (r.ok && r.value ? r.value.lookup : headers.value!.lookup)) : [headers.value.lookup];
  const results = await Promise.all(lookups.map((lookup) => verifyDetachedFile(file.value, lookup)));
  const confirmed = results.flatMap((r) => r.confirmed);
  const heights = new Set(confirmed.map((c) => c.height));
  // With header files, an attestation no given header matches is unchecked; with a header source, it failed.
  const failures = results[0]!.failed.filter((f) => given.length === 0 || !heights.has(f.height))
    .filter((f) => given.length === 0 || results.every((r) => r.failed.some((g) => g.height === f.height)));
  for (const c of confirmed) out(`  ok   anchor_block      anchor ${name}: Bitcoin block ${c.height} (${c.blockHash}) has merkle root ${c.merkleRoot}; existed by ${c.attestedAt}`);
  if (given.length === 0) {
    for (const f of failures) out(`  FAIL anchor_block      anchor ${name}: block ${f.height}: ${f.kind}${'expected' in f ? ` (header merkle root ${f.expected}, the file's ${f.actual})` : ''}`);
    for (const u of results[0]!.unavailable) out(`  FAIL anchor_block      anchor ${name}: the header of block ${u.height} could not be fetched from ${headers.value.from}: ${u.error.message}`);
    failed ||= failures.length > 0 || results[0]!.unavailable.length > 0;
  } else {
    const unmatched = [...new Set(results[0]!.failed.map((f) => f.height))].filter((h) => !heights.has(h));
    if (unmatched.length && confirmed.length) out(`  note anchor_block      anchor ${name}: no header given for the attestation(s) at block ${unmatched.join(', ')}`);
    if (!confirmed.length) for (const f of results[0]!.failed) out(`  FAIL anchor_block      anchor ${name}: block ${f.height}: ${f.kind}${'expected' in f ? ` (header merkle root ${f.expected}, the file's ${f.actual})` : ''}`);
  }
  for (const p of results[0]!.pending) out(`  note anchor_pending    anchor ${name}: still pending on ${p.uri}`);
  if (confirmed.length === 0) {
    out(`  FAIL anchor_block      anchor ${name}: no Bitcoin attestation verified${results[0]!.pending.length ? ' (pending only: upgrade it later)' : ''}`);
    failed = true;
  }
  return failed ? 1 : 0;
}

function verdict(code: number, name: string, out: Out): number {
  out(code === 0 ? `verdict: PASS: anchor ${name} verified up to a Bitcoin block header (log_v1 §6 step 5)` : `verdict: FAIL: anchor ${name} did not verify; the lines above say why`);
  return code;
}

/** `ledger verify <file or URL>.ots`. */
export async function runAnchorCheck(source: string, options: AnchorCheckOptions, out: Out): Promise<number> {
  const fetcher = options.fetcher ?? fetch;
  const bytes = await readBytes(source, fetcher);
  if (!bytes.ok) {
    out(`verdict: UNUSABLE INPUT: ${bytes.error}`);
    return 2;
  }
  let expected: { digest: Uint8Array; what: string } | null = null;
  if (options.checkpoint) {
    const note = await readBytes(options.checkpoint, fetcher);
    const body = note.ok ? checkpointBodyDigest(new TextDecoder().decode(note.value)) : null;
    if (!body) {
      out(`verdict: UNUSABLE INPUT: ${options.checkpoint} is not a checkpoint`);
      return 2;
    }
    expected = { digest: body.digest, what: `the checkpoint of tree size ${body.treeSize}` };
  }
  const name = source.replace(/^.*\//, '');
  out(`OpenTimestamps anchor ${name}`);
  const code = await checkAnchor(name, bytes.value, expected, options, out);
  return code === 2 ? 2 : verdict(code, name, out);
}

/** The anchor_proof of a proof bundle (JSON text), checked; null when the text is no proof bundle. */
export async function checkProofAnchor(bundleText: string, options: AnchorCheckOptions, out: Out): Promise<number | null> {
  let bundle: { object?: unknown; anchor_proof?: { tree_size?: unknown; ots?: unknown; checkpoint?: unknown } | null };
  try {
    bundle = JSON.parse(bundleText);
  } catch {
    return null;
  }
  if (bundle?.object !== 'proof' || bundle.anchor_proof === undefined) return null;
  const anchor = bundle.anchor_proof;
  if (anchor === null) return null;
  const name = `of checkpoint ${String(anchor.tree_size)}`;
  const ots = typeof anchor.ots === 'string' ? b64Decode(anchor.ots) : null;
  const body = typeof anchor.checkpoint === 'string' ? checkpointBodyDigest(anchor.checkpoint) : null;
  out(`anchor_proof (OpenTimestamps anchor ${name})`);
  if (!ots || !body || body.treeSize !== anchor.tree_size) {
    out(`  FAIL anchor_proof      anchor ${name}: the bundle's anchor_proof lacks a base64 .ots or its checkpoint of that tree size`);
    return verdict(1, name, out);
  }
  return verdict(await checkAnchor(name, ots, { digest: body.digest, what: `the checkpoint of tree size ${body.treeSize}` }, options, out), name, out);
}
