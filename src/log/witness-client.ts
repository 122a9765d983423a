// The log's side of C2SP tlog-witness: one `add-checkpoint` request to one witness, and what its
// answer means, as a value. A cosignature answer is checked with the witness's vkey before it is
// believed; a 409 counts as the witness's size only with `Content-Type: text/x.tlog.size` (without
// it, as a 422, the witness refused the checkpoint as inconsistent: a possible split view). The
// exchange is bounded in time and bytes, redirects are refused (a POST turned into a GET).
import { b64Encode } from '../core/base64.ts';
import { verifyRaw } from '../core/ed25519.ts';
import { checkCosignature } from '../core/cosignature.ts';
import { hashesEqual, type Hash } from '../core/merkle.ts';
import { parseDecimalCount, parseNote, type Vkey } from '../core/note.ts';
import { bodyText, boundedExchange, type ExchangeFailure } from '../runtime/bounded-fetch.ts';

export const SIZE_CONTENT_TYPE = 'text/x.tlog.size';
/** A witness's answer is a few signature lines; more is not an answer. */
const MAX_ANSWER_BYTES = 16 * 1024;

export type WitnessReply =
  /** 200 with a cosignature by the witness that verifies: its line, exactly as sent, and its time. */
  | { kind: 'cosigned'; line: string; time: number }
  /** 409 with the size the witness last cosigned. */
  | { kind: 'size'; size: number }
  /** 409 without a size, or 422: the witness holds a tree this checkpoint does not extend. */
  | { kind: 'inconsistent'; status: number; reason: string }
  /** Anything else: unreachable, slow, 4xx, 5xx, or an answer that is not a valid cosignature. */
  | { kind: 'failed'; reason: string };

/** The request body: `old <N>`, the proof's hashes, an empty line, then the signed checkpoint. */
export function addCheckpointBody(old: number, proof: Hash[], note: string): string {
  return `old ${old}\n${proof.map((h) => `${b64Encode(h)}\n`).join('')}\n${note}`;
}

function describeFailure(f: ExchangeFailure): string {
  switch (f.kind) {
    case 'timeout': return 'no answer in time';
    case 'unreachable': return `unreachable (${(f.error as Error)?.cause instanceof Error ? ((f.error as Error).cause as Error).message : (f.error as Error)?.message ?? 'error'})`;
    case 'broken': return `answer ${f.status} broke off`;
    case 'too_large': return `answer ${f.status} over ${MAX_ANSWER_BYTES} bytes`;
    case 'redirect': return `answered a redirect (${f.status})`;
  }
}

/** A short, printable excerpt of what a witness said. */
function excerpt(text: string): string {
  const clean = text.replace(/[^\x20-\x7e]+/g, ' ').trim();
  return clean.length > 200 ? `${clean.slice(0, 200)}...` : clean;
}

/** The witness's cosignature among the answer's lines, checked over the checkpoint's note text. */
function cosignatureIn(answer: string, note: string, witness: Vkey): WitnessReply {
  if (answer.length === 0 || !answer.endsWith('\n')) return { kind: 'failed', reason: 'answered 200 without signature lines' };
  const parsed = parseNote(`${note.slice(0, note.indexOf('\n\n') + 1)}\n${answer}`);
  if (!parsed.ok) return { kind: 'failed', reason: `answered 200 with no signature lines: ${parsed.error}` };
  const lines = answer.slice(0, -1).split('\n');
  for (let i = 0; i < parsed.value.signatures.length; i++) {
    const sig = parsed.value.signatures[i]!;
    if (sig.name !== witness.name || !hashesEqual(sig.keyId, witness.keyId)) continue;
    const checked = checkCosignature(parsed.value.text, sig, witness, verifyRaw);
    if (!checked.ok) return { kind: 'failed', reason: `answered a cosignature that does not verify: ${checked.error}` };
    return { kind: 'cosigned', line: `${lines[i]!}\n`, time: checked.value.time };
  }
  return { kind: 'failed', reason: 'answered 200 without a cosignature by its key' };
}

/** POSTs one add-checkpoint request to the witness at `url` (its submission prefix). */
export async function addCheckpoint(
  url: string,
  request: { old: number; proof: Hash[]; note: string },
  witness: Vkey,
  limits: { timeoutMs: number; fetch?: typeof fetch },
): Promise<WitnessReply> {
  const exchange = await boundedExchange(`${url}/add-checkpoint`, {
    method: 'POST',
    body: addCheckpointBody(request.old, request.proof, request.note),
    redirect: 'manual',
  }, { timeoutMs: limits.timeoutMs, maxBytes: MAX_ANSWER_BYTES, fetch: limits.fetch ?? fetch });
  if (!exchange.ok) return { kind: 'failed', reason: describeFailure(exchange.error) };
  const { status, headers } = exchange.value;
  const text = bodyText(exchange.value);
  if (status === 200) return cosignatureIn(text, request.note, witness);
  if (status === 409 && headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() === SIZE_CONTENT_TYPE) {
    const size = /^([0-9]+)\n$/.exec(text);
    const n = size ? parseDecimalCount(size[1]!) : null;
    return n === null ? { kind: 'failed', reason: `answered 409 with a size that is not one: ${excerpt(text)}` } : { kind: 'size', size: n };
  }
  if (status === 409 || status === 422) return { kind: 'inconsistent', status, reason: excerpt(text) };
  return { kind: 'failed', reason: `answered ${status}${text ? `: ${excerpt(text)}` : ''}` };
}
