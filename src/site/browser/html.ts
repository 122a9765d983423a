// HTML built by one helper: the `html` tagged template escapes every interpolated value, unless
// it is already Html (built by this same helper). Nothing else in the site writes markup from
// data, so a handle, a thesis or a metadata value can never become markup.
// Characters a reader cannot see (bidi controls, zero-width characters, line separators, other
// control characters) are shown, as code hosts do: in element text as a marked ⟨U+202E⟩ with the
// character's name in its title, inside a tag or a <title> as the plain ⟨U+202E⟩. An agent's
// display name or thesis cannot reorder or hide what the page says; the stored bytes (and the
// JSON, and every jsonScript block) keep the characters as recorded.
// It sits with the page scripts (src/site/browser/), which use it as the server's pages do.

const brand = Symbol('html');

/** Markup known to be safe: made by `html`, `join`, or `trusted` (for text the project wrote itself). */
export type Html = { readonly [brand]: true; readonly text: string };

const make = (text: string): Html => ({ [brand]: true, text });

export function isHtml(value: unknown): value is Html {
  return typeof value === 'object' && value !== null && (value as Html)[brand] === true;
}

const ESCAPES: Record<string, string> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' };

/** Text as HTML text or a quoted attribute value. */
export function escapeHtml(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ESCAPES[c]!);
}

/**
 * Characters shown as ⟨U+XXXX⟩: bidi embeddings, overrides, isolates and marks; zero-width
 * characters; line and paragraph separators; the soft hyphen; tag characters; C0 and C1 controls
 * but TAB, LF and CR.
 */
const INVISIBLE_CLASS = String.raw`[\u0000-\u0008\u000B\u000C\u000E-\u001F\u007F-\u009F\u00AD\u061C\u180E\u200B-\u200F\u2028\u2029\u202A-\u202E\u2060-\u2064\u2066-\u2069\uFEFF\u{E0000}-\u{E007F}]`;
export const INVISIBLE = new RegExp(INVISIBLE_CLASS, 'u');
const EACH_INVISIBLE = new RegExp(INVISIBLE_CLASS, 'gu');

const NAMES: Record<number, string> = {
  0x00ad: 'SOFT HYPHEN', 0x061c: 'ARABIC LETTER MARK', 0x180e: 'MONGOLIAN VOWEL SEPARATOR',
  0x200b: 'ZERO WIDTH SPACE', 0x200c: 'ZERO WIDTH NON-JOINER', 0x200d: 'ZERO WIDTH JOINER', 0x200e: 'LEFT-TO-RIGHT MARK', 0x200f: 'RIGHT-TO-LEFT MARK',
  0x2028: 'LINE SEPARATOR', 0x2029: 'PARAGRAPH SEPARATOR', 0x202a: 'LEFT-TO-RIGHT EMBEDDING', 0x202b: 'RIGHT-TO-LEFT EMBEDDING',
  0x202c: 'POP DIRECTIONAL FORMATTING', 0x202d: 'LEFT-TO-RIGHT OVERRIDE', 0x202e: 'RIGHT-TO-LEFT OVERRIDE', 0x2060: 'WORD JOINER',
  0x2066: 'LEFT-TO-RIGHT ISOLATE', 0x2067: 'RIGHT-TO-LEFT ISOLATE', 0x2068: 'FIRST STRONG ISOLATE', 0x2069: 'POP DIRECTIONAL ISOLATE',
  0xfeff: 'ZERO WIDTH NO-BREAK SPACE',
};

const codePoint = (c: string) => `U+${c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0')}`;
const plainMarker = (c: string) => `⟨${codePoint(c)}⟩`;
// Single-quoted attributes: should this ever land inside a double-quoted attribute, it is text there.
const markedMarker = (c: string) => {
  const name = NAMES[c.codePointAt(0)!];
  return `<span class='invisible-char' title='${codePoint(c)}${name ? ` ${name}` : ''}'>${plainMarker(c)}</span>`;
};

/**
 * Whether a value placed after `before` would be element text that markup can go into: not inside
 * a tag or a quoted attribute (also one a fragment opens, html` title="${x}"`), not in the text
 * of title, textarea, script or style. Asked only for a value holding an invisible character.
 */
function inMarkupText(before: string): boolean {
  const tail = before.slice(before.lastIndexOf('>') + 1);
  if (tail.includes('<') || /=\s*("[^"]*|'[^']*)$/.test(tail)) return false;
  return !/^<(title|textarea|script|style)\b/i.test(before.slice(before.lastIndexOf('<')));
}

/** Escaped text with each invisible character shown: marked up in element text, plain elsewhere. */
export function visibleText(value: string, markup: boolean): string {
  return escapeHtml(value).replace(EACH_INVISIBLE, markup ? markedMarker : plainMarker);
}

export type Interpolated = Html | string | number | boolean | null | undefined | readonly Interpolated[];

function render(value: Interpolated, before: string): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map((v) => render(v, before)).join('');
  if (isHtml(value)) return value.text;
  const text = String(value);
  return INVISIBLE.test(text) ? visibleText(text, inMarkupText(before)) : escapeHtml(text);
}

/** html`<p>${text}</p>`: every value escaped (invisible characters shown), arrays concatenated, null/undefined/false dropped. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!, out) + strings[i + 1]!;
  return make(out);
}

/** Markup the project wrote itself (a rendered Markdown file of docs/, a stylesheet link): never data. */
export function trusted(markup: string): Html {
  return make(markup);
}

/** A value for a <script type="application/json"> block: `<` escaped so no `</script>` can close it. */
export function jsonScript(value: unknown): Html {
  return make(JSON.stringify(value).replace(/</g, '\\u003c').replace(/\u2028/g, '\\u2028').replace(/\u2029/g, '\\u2029'));
}
