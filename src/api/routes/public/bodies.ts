// The public reads' values as the HTTP edge sends them: the ledger and chain pages and the proof
// as JSON text, the export as NDJSON lines, and the ETags of the pages and the export. Records go
// out as record-text.ts writes them (their chain entry in canon_v1, their stored content embedded
// without parsing); the pages bring their records' texts, rendered once as they were measured.
import { sha256Hex } from '../../../core/sha256.ts';
import { recordJson } from '../../../ledger/public/record-text.ts';
import type { ChainPage, Export, LedgerPage, Proof } from '../../../ledger/public/reads.ts';
import type { StoredRecord } from '../../../domain/types.ts';

/** A JSON body as text, with the ETag the route sets. */
export type TaggedBody = { body: string; etag: string };

/** Export lines are handed to the stream in chunks of about this many characters (a longer line alone). */
const EXPORT_CHUNK_CHARS = 64 * 1024;

/**
 * A page's ETag, taken over what decides the page rather than over its megabytes of text: records
 * never change, so their ids (a ledger page), or the range and the chain hash of the last one (a
 * chain page: the hash chain pins every record before it), name them.
 */
function pageTag(...parts: string[]): string {
  return `W/"${sha256Hex(parts.join('\n')).slice(0, 32)}"`;
}

/** GET /v1/ledger. */
export function ledgerPageBody(page: LedgerPage): TaggedBody {
  const tail = `,"has_more":${page.hasMore},"next_cursor":${JSON.stringify(page.nextCursor)},"next":${JSON.stringify(page.next)}}`;
  const body = `{"object":"list","url":"/v1/ledger","data":[${page.texts.join(',')}]${tail}`;
  return { body, etag: pageTag(page.items.map((i) => i.record.id).join(','), tail) };
}

/** GET /v1/agents/{handle}/chain. */
export function chainPageBody(page: ChainPage): TaggedBody {
  const documentText = JSON.stringify(page.document);
  const tail = `,"has_more":${page.hasMore},"next_after_seq":${page.hasMore ? page.lastSeq : 'null'},"next":${JSON.stringify(page.next)}}`;
  const body = `${documentText.slice(0, -1)},"records":[${page.texts.join(',')}]${tail}`;
  const lastHash = page.records.at(-1)?.chainHash ?? '';
  return { body, etag: pageTag(documentText, `${page.texts.length} records to ${page.lastSeq}, ${lastHash}`, tail) };
}

/** GET /v1/proof/{record_id} (its ETag is the one taken over the body). */
export function proofBody(proof: Proof): string {
  return `${JSON.stringify(proof.document).slice(0, -1)},"record":${proof.recordText}}`;
}

/** One line of an export (without its newline): the record with its content, and the members a wing adds. */
export function exportLine(r: StoredRecord, members: Record<string, unknown> | null): string {
  let extra = '';
  if (members) for (const name in members) extra += `,${JSON.stringify(name)}:${JSON.stringify(members[name])}`;
  return recordJson(r, { payloads: true, document: false }, extra);
}

/**
 * GET /v1/export: the header line, then a line per record, in chunks of EXPORT_CHUNK_CHARS; a page
 * of records is read only when the stream asks for more. The ETag is taken over the header line,
 * which names the export's content.
 */
export function exportBody(exported: Export): { etag: string; lines: AsyncGenerator<string> } {
  const headerText = JSON.stringify(exported.header);
  async function* lines(): AsyncGenerator<string> {
    yield headerText + '\n';
    for await (const page of exported.pages) {
      let chunk = '';
      for (const r of page.records) {
        chunk += exportLine(r, page.members(r)) + '\n';
        if (chunk.length < EXPORT_CHUNK_CHARS) continue;
        yield chunk;
        chunk = '';
      }
      if (chunk !== '') yield chunk;
    }
  }
  return { etag: pageTag(headerText), lines: lines() };
}
