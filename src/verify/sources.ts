// Where `ledger verify` reads from: a file (an NDJSON export, or a saved chain page or proof
// bundle) or a URL of an export, a chain or a proof (documents.ts, which this re-exports).
import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import {
  EXPORT_BLOCK_LINES, UnusableInput, checkHeader, firstLineValue, fromDocument, isUrl, lineBlocks, openUrl, parseDocument, readLines, splitFirstLine,
  type Source,
} from './documents.ts';
import { isObject } from '../core/json.ts';

export * from './documents.ts';


export async function openSource(source: string, fetcher: typeof fetch = fetch): Promise<Source> {
  return isUrl(source) ? openUrl(source, fetcher) : openFile(source);
}

// ---------------------------------------------------------------------------------------------
// Files

async function openFile(path: string): Promise<Source> {
  try {
    const handle = await open(path, 'r');
    await handle.close();
  } catch (e) {
    throw new UnusableInput(`cannot read ${path}: ${(e as Error).message}`);
  }
  const { first, rest } = await splitFirstLine(createReadStream(path, { highWaterMark: 1 << 20 }));
  if (first === null) throw new UnusableInput(`${path} is empty`);
  const header = firstLineValue(first, path);
  if (isObject(header) && header.object === 'export') {
    return { kind: 'export', origin: path, header: checkHeader(header, path), blocks: lineBlocks(rest, EXPORT_BLOCK_LINES, 2) };
  }
  // Not an export: a JSON document (a proof bundle or a chain page), read whole.
  let text = first;
  for await (const l of readLines(rest)) text += '\n' + l.text;
  return fromDocument(parseDocument(text, path), path, null);
}

