// Checking what the service publishes, with the verifier `ledger verify` runs (src/verify: the
// shared core's canon_v1 §5 checks, the published form's checks, the head, and a proof's log
// checks), here returning the result as data instead of printing it: a proof bundle, a chain
// page or a walk over every page, or an export (NDJSON text or a byte stream).
import { parseVkey, type Vkey } from '../core/note.ts';
import { parseWitnessPolicy, policyOfWitnesses, type WitnessPolicy } from '../core/witness-policy.ts';
import { fromDocument, openExport, openUrl, UnusableInput, type Source } from '../verify/documents.ts';
import { publishedVkey } from '../verify/proof.ts';
import {
  inlineRunner, parsePins, verificationOf, verifyChainPages, verifyExport, verifyProof, type Report, type Verification,
} from '../verify/walk.ts';
import { LedgerValidationError } from './errors.ts';

export type { Verification, VerifiedCheck } from '../verify/walk.ts';
export type { Failure } from '../verify/records.ts';

export type VerifyOptions = {
  /** Heads pinned earlier, `<seq>:<chain_hash>`: each must still be in what is verified. */
  pins?: string[];
  /**
   * The global log's vkey, for a proof's checkpoint signature. Default: when `baseUrl` is given,
   * the one the service publishes on /transparency; otherwise the signature is not checked (a note).
   */
  vkey?: string;
  /**
   * Witnesses to require, as `ledger verify` takes them: a C2SP tlog-policy (its text), or witness
   * cosigner vkeys of which `quorum` (default: all) must have cosigned. A proof's checkpoint
   * without valid cosignatures satisfying them fails the `witnesses` check.
   */
  witnessPolicy?: string;
  witnesses?: string[];
  quorum?: number;
  /** The API base the input came from: for the vkey and consistency proofs. */
  baseUrl?: string;
  fetch?: typeof fetch;
};

/** A proof bundle (GET /v1/proof/{id}) or a chain page (GET /v1/agents/{handle}/chain), as parsed JSON. */
export async function verifyDocument(document: unknown, options: VerifyOptions = {}): Promise<Verification> {
  return verifySource(() => fromDocument(document, options.baseUrl ?? 'the document', null), options);
}

/** An export (GET /v1/export): its NDJSON text, or its bytes as they arrive. */
export async function verifyExportData(data: string | Uint8Array | AsyncIterable<Uint8Array>, options: VerifyOptions = {}): Promise<Verification> {
  const chunks = typeof data === 'string' ? once(new TextEncoder().encode(data)) : data instanceof Uint8Array ? once(data) : data;
  return verifySource(() => openExport(chunks, 'the export'), options);
}

/** A proof, chain or export URL: a chain is followed page by page to its head, an export streamed. */
export async function verifyUrl(url: string, options: VerifyOptions = {}): Promise<Verification> {
  const fetcher = options.fetch ?? ((input, init) => globalThis.fetch(input, init));
  return verifySource(() => openUrl(url, fetcher), { ...options, baseUrl: options.baseUrl ?? apiBaseOf(url) ?? undefined });
}

async function* once(bytes: Uint8Array): AsyncGenerator<Uint8Array> {
  yield bytes;
}

/** `https://host/v1/proof/x` -> `https://host/v1`. */
function apiBaseOf(url: string): string | null {
  return /^(https?:\/\/.+?\/v1)\//i.exec(url)?.[1] ?? null;
}

async function verifySource(open: () => Source | Promise<Source>, options: VerifyOptions): Promise<Verification> {
  try {
    const pins = parsePins(options.pins ?? []);
    witnessPolicyOf(options); // bad witness options are refused whatever the input
    const source = await open();
    const runner = () => inlineRunner;
    let report: Report;
    if (source.kind === 'export') report = await verifyExport(source, pins, [], runner, 1);
    else if (source.kind === 'chain') report = await verifyChainPages(source, pins, [], runner, 1);
    else report = await verifyProof(source, pins, await logContext(options));
    return verificationOf(report);
  } catch (e) {
    if (e instanceof UnusableInput) {
      throw new LedgerValidationError({ code: 'unusable_input', type: 'invalid_request_error', status: 0, message: `cannot verify: ${e.message}` });
    }
    throw e;
  }
}

async function logContext(options: VerifyOptions) {
  const fetcher = options.fetch ?? ((input: RequestInfo | URL, init?: RequestInit) => globalThis.fetch(input, init));
  const baseUrl = options.baseUrl ?? null;
  let vkey: Vkey | null = null;
  let vkeyFrom = 'none';
  if (options.vkey !== undefined) {
    const parsed = parseVkey(options.vkey.trim());
    if (!parsed.ok) throw new UnusableInput(`vkey: ${parsed.error}`);
    vkey = parsed.value;
    vkeyFrom = 'the vkey given';
  } else if (baseUrl) {
    vkey = await publishedVkey(baseUrl, fetcher);
    if (vkey) vkeyFrom = `published on ${baseUrl}/transparency`;
  }
  return { vkey, vkeyFrom, checkpoints: [], fetcher, baseUrl, witnessPolicy: witnessPolicyOf(options) };
}

/** The policy the options ask for, or null; unusable options throw. */
function witnessPolicyOf(options: VerifyOptions): WitnessPolicy | null {
  const vkeys = options.witnesses ?? [];
  if (options.witnessPolicy !== undefined) {
    if (vkeys.length > 0 || options.quorum !== undefined) throw new UnusableInput('witnessPolicy and witnesses/quorum are exclusive');
    const policy = parseWitnessPolicy(options.witnessPolicy);
    if (!policy.ok) throw new UnusableInput(`witnessPolicy: ${policy.error}`);
    return policy.value;
  }
  if (vkeys.length === 0) {
    if (options.quorum !== undefined) throw new UnusableInput('quorum needs the witnesses it counts (witnesses: [vkey, ...])');
    return null;
  }
  const policy = policyOfWitnesses(vkeys, options.quorum ?? vkeys.length);
  if (!policy.ok) throw new UnusableInput(`witnesses: ${policy.error}`);
  return policy.value;
}
