// The user docs as pages: the Markdown of docs/*.md (as docs.ts reads it) and the
// getting-started sections of the README (quick start, signing and reading, connecting a broker),
// rendered with `marked`. Links between the files become links between the pages; links to other
// files of the repository become plain text (the site does not serve them). Rendered once, on
// first use.
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Marked, type Tokens } from 'marked';
import { DOCS_DIR, readDocs } from './docs.ts';
import { escapeHtml } from './browser/html.ts';

const README = new URL('../../README.md', import.meta.url);

/** The README sections shown on /docs, by the start of their heading. */
export const GETTING_STARTED = ['Quick start', 'Sign decisions', 'Connect a broker'];

export type Doc = { name: string; title: string; markdown: string; html: string };

/** GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens. */
export function slug(text: string): string {
  return text.toLowerCase().trim().replace(/<[^>]*>/g, '').replace(/[^\p{L}\p{N}\s_-]/gu, '').replace(/\s/g, '-');
}

/** Where a link of the docs points on the site, or null when the site does not serve it. */
export function siteHref(href: string, docNames: ReadonlySet<string>): string | null {
  if (/^(https?:|mailto:)/i.test(href)) return href;
  if (href.startsWith('#')) return href;
  const [path, fragment] = href.split('#', 2) as [string, string | undefined];
  const hash = fragment ? `#${fragment}` : '';
  const file = path.replace(/^(\.\/|\.\.\/)+/, '').replace(/^docs\//, '');
  if (/^README\.md$/i.test(file)) return `/docs${hash}`;
  const doc = /^([a-z0-9_-]+)\.md$/i.exec(file);
  if (doc && docNames.has(doc[1]!)) return `/docs/${doc[1]}${hash}`;
  const image = /^images\/([a-z0-9_-]+\.png)$/i.exec(file);
  if (image) return `/docs/images/${image[1]}`;
  return null;
}

function renderer(docNames: ReadonlySet<string>): Marked {
  const marked = new Marked({ gfm: true });
  marked.use({
    renderer: {
      heading(this: { parser: { parseInline: (t: Tokens.Heading['tokens']) => string } }, token: Tokens.Heading) {
        const inner = this.parser.parseInline(token.tokens);
        return `<h${token.depth} id="${escapeHtml(slug(token.text))}">${inner}</h${token.depth}>\n`;
      },
      link(this: { parser: { parseInline: (t: Tokens.Link['tokens']) => string } }, token: Tokens.Link) {
        const inner = this.parser.parseInline(token.tokens);
        const href = siteHref(token.href, docNames);
        if (href === null) return inner;
        return `<a href="${escapeHtml(href)}"${token.title ? ` title="${escapeHtml(token.title)}"` : ''}>${inner}</a>`;
      },
      image(token: Tokens.Image) {
        const src = siteHref(token.href, docNames);
        return src === null ? escapeHtml(token.text) : `<img src="${escapeHtml(src)}" alt="${escapeHtml(token.text)}">`;
      },
    },
  });
  return marked;
}

/** The README's `## ` sections whose heading starts with one of `starts`, in that order. */
export function readmeSections(readme: string, starts: readonly string[]): string[] {
  const sections = readme.split(/^(?=## )/m);
  return starts.map((s) => sections.find((sec) => sec.startsWith(`## ${s}`))).filter((s): s is string => s !== undefined);
}

type Loaded = { guides: Map<string, Doc>; start: Doc };

export class DocPages {
  private loaded: Promise<Loaded> | null = null;

  private load(): Promise<Loaded> {
    if (this.loaded === null) {
      this.loaded = this.render();
      this.loaded.catch(() => (this.loaded = null)); // tried again on the next request
    }
    return this.loaded;
  }

  private async render(): Promise<Loaded> {
    const files = await readDocs();
    const names = new Set(files.map((f) => f.name.slice(0, -'.md'.length)));
    const marked = renderer(names);
    const render = (md: string) => marked.parse(md, { async: false }) as string;
    const guides = new Map<string, Doc>();
    for (const f of files) {
      const name = f.name.slice(0, -'.md'.length);
      guides.set(name, { name, title: f.title, markdown: f.text, html: render(f.text) });
    }
    const readme = await readFile(README, 'utf8').catch(() => '');
    // One level down: the sections sit under the page's own "Getting started" heading.
    const markdown = readmeSections(readme, GETTING_STARTED).join('\n').replace(/^(#{2,5}) /gm, '#$1 ');
    return { guides, start: { name: 'index', title: 'Getting started', markdown, html: render(markdown) } };
  }

  async gettingStarted(): Promise<Doc> {
    return (await this.load()).start;
  }

  async guides(): Promise<Doc[]> {
    return [...(await this.load()).guides.values()];
  }

  async guide(name: string): Promise<Doc | null> {
    return (await this.load()).guides.get(name) ?? null;
  }

  /** A PNG of docs/images/ (the README's screenshots), or null. */
  image(file: string): Buffer | null {
    if (!/^[a-z0-9_-]+\.png$/i.test(file)) return null;
    const path = join(DOCS_DIR, 'images', file);
    return existsSync(path) ? readFileSync(path) : null;
  }
}
