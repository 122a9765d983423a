// The site wing's catalogue of the user docs: the Markdown files of docs/ in this package, read
// once, served as they are at {site_url}/docs/<name>.md and inlined in /llms-full.txt. Read from
// the files themselves, so what is served is what is written and cannot drift from it.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

export type DocFile = {
  /** The file name, the last segment of its URL (`signing.md`). */
  name: string;
  /** Its first H1. */
  title: string;
  /** The first sentence of its first paragraph, as plain text. */
  summary: string;
  text: string;
};

/** The package's docs/: the same place from src/site/ (tsx) and from dist/site/ (the build). */
export const DOCS_DIR = fileURLToPath(new URL('../../docs/', import.meta.url));

export const DOC_NAME = /^[a-z0-9][a-z0-9_-]{0,63}\.md$/;

/** Bounds on what is read: a docs folder is small, and nothing in it is read without limit. */
const LIMITS = { files: 100, bytes: 1024 * 1024 };

export async function readDocs(dir = DOCS_DIR): Promise<DocFile[]> {
  let names: string[];
  try {
    names = (await readdir(dir)).filter((n) => DOC_NAME.test(n)).sort();
  } catch {
    return []; // an install without docs/ serves none, and says so where they would be listed
  }
  const docs: DocFile[] = [];
  for (const name of names.slice(0, LIMITS.files)) {
    const text = await readFile(join(dir, name), 'utf8');
    if (Buffer.byteLength(text) > LIMITS.bytes) continue;
    docs.push({ name, ...outline(text, name), text });
  }
  return docs;
}

/** The title (first H1) and the first sentence of the first paragraph after it. */
export function outline(text: string, name: string): { title: string; summary: string } {
  const lines = text.split('\n');
  const h1 = lines.findIndex((l) => /^# \S/.test(l));
  const title = h1 === -1 ? name : lines[h1]!.slice(2).trim();
  const rest = lines.slice(h1 + 1);
  const start = rest.findIndex((l) => l.trim() !== '' && !/^(#|```|\||- |\d+\. |>)/.test(l));
  const paragraph: string[] = [];
  for (const l of start === -1 ? [] : rest.slice(start)) {
    if (l.trim() === '') break;
    paragraph.push(l.trim());
  }
  const plain = paragraph.join(' ').replace(/\[([^\]]*)\]\([^)]*\)/g, '$1').replace(/\*\*/g, '');
  const sentence = /^(.*?[.!?])(\s|$)/.exec(plain)?.[1] ?? plain;
  return { title, summary: sentence.length > 240 ? `${sentence.slice(0, 237)}...` : sentence };
}
