// HTML built by one helper: the `html` tagged template escapes every interpolated value, unless
// it is already Html (built by this same helper). Nothing else in the site writes markup from
// data, so a handle, a thesis or a metadata value can never become markup.

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

export type Interpolated = Html | string | number | boolean | null | undefined | readonly Interpolated[];

function render(value: Interpolated): string {
  if (value === null || value === undefined || value === false) return '';
  if (Array.isArray(value)) return value.map(render).join('');
  if (isHtml(value)) return value.text;
  return escapeHtml(String(value));
}

/** html`<p>${text}</p>`: every value escaped, arrays concatenated, null/undefined/false dropped. */
export function html(strings: TemplateStringsArray, ...values: Interpolated[]): Html {
  let out = strings[0]!;
  for (let i = 0; i < values.length; i++) out += render(values[i]!) + strings[i + 1]!;
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
