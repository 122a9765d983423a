// canon_v1 serialisation (§1) and number normalisation (§2 applied to whole trees).
// It owns the exact bytes that are hashed and signed. RFC 8785 restricted to values without
// numbers.

import { normaliseDecimal } from './decimal.ts';
import { JsonNumber, joinPath, setOwn, type JsonValue } from './json.ts';

/** A canon_v1 value: JSON without numbers (every number is a normalised decimal string). */
export type CanonValue = null | boolean | string | CanonValue[] | { [key: string]: CanonValue };

// Guards against cycles; real documents are at most 64 (reader limit) + 1 deep.
const MAX_CANON_DEPTH = 1000;

function serialiseString(s: string): string {
  // One pass: reject lone surrogates and find whether anything needs escaping at all.
  let needsEscape = false;
  const n = s.length;
  for (let i = 0; i < n; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || c === 0x22 || c === 0x5c) needsEscape = true;
    else if (c >= 0xd800 && c <= 0xdfff) {
      const d = s.charCodeAt(i + 1);
      if (c <= 0xdbff && d >= 0xdc00 && d <= 0xdfff) i++;
      else throw new TypeError('canon_v1: string holds a lone surrogate (invalid Unicode)');
    }
  }
  // ECMAScript JSON.stringify escapes exactly as canon_v1 §1 requires for well-formed strings:
  // `"` `\` and U+0000..U+001F (short forms or lower-case \u00xx); everything else as itself.
  return needsEscape ? JSON.stringify(s) : `"${s}"`;
}

function serialise(v: unknown, depth: number): string {
  if (v === null) return 'null';
  switch (typeof v) {
    case 'string':
      return serialiseString(v);
    case 'boolean':
      return v ? 'true' : 'false';
    case 'object': {
      if (depth >= MAX_CANON_DEPTH) throw new TypeError('canon_v1: value nested too deeply (or cyclic)');
      if (Array.isArray(v)) {
        let out = '[';
        for (let i = 0; i < v.length; i++) {
          if (i > 0) out += ',';
          if (!(i in v)) throw new TypeError('canon_v1: sparse array');
          out += serialise(v[i], depth + 1);
        }
        return out + ']';
      }
      if (v instanceof JsonNumber) {
        throw new TypeError('canon_v1: JsonNumber found; normalise numbers to decimal strings first');
      }
      const proto: unknown = Object.getPrototypeOf(v);
      if (proto !== Object.prototype && proto !== null) throw new TypeError('canon_v1: not a plain object');
      const obj = v as Record<string, unknown>;
      // Default sort compares UTF-16 code units, which is what RFC 8785 prescribes.
      const keys = Object.keys(obj).sort();
      let out = '{';
      for (let i = 0; i < keys.length; i++) {
        const k = keys[i] as string;
        if (i > 0) out += ',';
        out += serialiseString(k);
        out += ':';
        out += serialise(obj[k], depth + 1);
      }
      return out + '}';
    }
    default:
      throw new TypeError(
        typeof v === 'number'
          ? 'canon_v1: JSON numbers are not allowed; use normalised decimal strings'
          : `canon_v1: ${typeof v} is not a JSON value`,
      );
  }
}

/** canon_v1(V) as a string (RFC 8785 without numbers). Throws TypeError on anything else. */
export function canonicalJson(v: CanonValue): string {
  return serialise(v, 0);
}

class TooLong {
  constructor(readonly path: string) {}
}

function normaliseAt(v: JsonValue, path: string): CanonValue {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof JsonNumber) {
    const r = normaliseDecimal(v.text);
    if (r.ok) return r.value;
    if (r.reason === 'too_long') throw new TooLong(path);
    throw new TypeError(`JsonNumber with invalid text at ${path || '(root)'}: ${JSON.stringify(v.text)}`);
  }
  if (Array.isArray(v)) {
    const out: CanonValue[] = new Array(v.length);
    for (let i = 0; i < v.length; i++) out[i] = normaliseAt(v[i] as JsonValue, joinPath(path, i));
    return out;
  }
  const out: { [key: string]: CanonValue } = {};
  for (const k of Object.keys(v)) setOwn(out, k, normaliseAt(v[k] as JsonValue, joinPath(path, k)));
  return out;
}

/**
 * Every JsonNumber at any depth becomes its normalised decimal string (canon_v1 §2).
 * `basePath` prefixes the reported path (e.g. "metadata").
 */
export function normaliseNumbers(
  v: JsonValue,
  basePath = '',
): { ok: true; value: CanonValue } | { ok: false; path: string; reason: 'too_long' } {
  try {
    return { ok: true, value: normaliseAt(v, basePath) };
  } catch (e) {
    if (e instanceof TooLong) return { ok: false, path: e.path, reason: 'too_long' };
    throw e;
  }
}

const encoder = new TextEncoder();

export function utf8(s: string): Uint8Array {
  return encoder.encode(s);
}
