// An SVG badge read by a real XML parser: it must be well-formed, have an <svg> root in the SVG
// namespace, and carry its text as aria-label and <title>. Returns what the tests compare.
import assert from 'node:assert/strict';
import { XMLParser, XMLValidator } from 'fast-xml-parser';

export type ParsedSvg = { label: string; title: string; fills: string[]; width: number; height: number };

const parser = new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '@_', textNodeName: '#text' });

function collect(node: unknown, name: string, out: string[]): void {
  if (Array.isArray(node)) for (const n of node) collect(n, name, out);
  else if (node !== null && typeof node === 'object') {
    for (const [k, v] of Object.entries(node)) {
      if (k === `@_${name}` && typeof v === 'string') out.push(v);
      else collect(v, name, out);
    }
  }
}

export function parseSvg(text: string): ParsedSvg {
  const valid = XMLValidator.validate(text);
  assert.equal(valid, true, `not well-formed XML: ${JSON.stringify(valid)}`);
  const doc = parser.parse(text) as { svg?: Record<string, unknown> };
  const svg = doc.svg;
  assert.ok(svg, 'the root element is <svg>');
  assert.equal(svg['@_xmlns'], 'http://www.w3.org/2000/svg');
  assert.equal(svg['@_role'], 'img');
  const fills: string[] = [];
  collect(svg, 'fill', fills);
  const title = svg.title as string;
  return { label: String(svg['@_aria-label']), title: String(title), fills, width: Number(svg['@_width']), height: Number(svg['@_height']) };
}
