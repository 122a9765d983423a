// Lossless, strict JSON reader (RFC 8259) for canon_v1 input.
// It is responsible for turning request text into a JsonValue tree whose numbers keep their exact
// source text, rejecting what canon_v1 cannot hash unambiguously (duplicate keys, lone surrogates,
// deep nesting). Plain TS, no dependencies: runs in Node and in the browser.

/** A JSON number, kept as the exact text written in the source (never parsed as a float). */
export class JsonNumber {
  constructor(readonly text: string) {}
}

export type JsonValue = null | boolean | string | JsonNumber | JsonValue[] | { [key: string]: JsonValue };

/** `path` is dotted: "" for the root, `metadata.a.b`, array indexes as `items.3`. */
export type ReadError = { message: string; path: string };

export const MAX_JSON_DEPTH = 64;

// With the `u` flag a well-formed pair is one code point outside this range, so only lone
// surrogates match.
const LONE_SURROGATE = /[\uD800-\uDFFF]/u;

export function hasLoneSurrogate(s: string): boolean {
  return LONE_SURROGATE.test(s);
}

/** Defines `key` as an ordinary own data property, so `__proto__` never touches the prototype. */
export function setOwn(obj: Record<string, unknown>, key: string, value: unknown): void {
  if (key === '__proto__') {
    Object.defineProperty(obj, key, { value, writable: true, enumerable: true, configurable: true });
  } else {
    obj[key] = value;
  }
}

/** Joins dotted path segments ("" for root). */
export function joinPath(base: string, segment: string | number): string {
  return base === '' ? String(segment) : `${base}.${segment}`;
}

class ParseFailure {
  constructor(
    readonly message: string,
    readonly path: string,
  ) {}
}

function describeChar(c: number): string {
  if (c >= 0x20 && c < 0x7f) return `'${String.fromCharCode(c)}'`;
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

function hexVal(c: number): number {
  if (c >= 0x30 && c <= 0x39) return c - 0x30;
  if (c >= 0x61 && c <= 0x66) return c - 0x57;
  if (c >= 0x41 && c <= 0x46) return c - 0x37;
  return -1;
}

function wellFormedForPath(s: string): string {
  return hasLoneSurrogate(s) ? s.replace(/[\uD800-\uDFFF]/gu, '\uFFFD') : s;
}

class Parser {
  private pos = 0;
  private readonly segments: (string | number)[] = [];

  constructor(private readonly src: string) {}

  private path(extra?: string | number): string {
    const all = extra === undefined ? this.segments : [...this.segments, extra];
    return all.map((s) => (typeof s === 'string' ? wellFormedForPath(s) : String(s))).join('.');
  }

  private fail(message: string, extra?: string | number): never {
    throw new ParseFailure(message, this.path(extra));
  }

  private unexpected(expected: string): never {
    const i = this.pos;
    if (i >= this.src.length) this.fail(`Unexpected end of input at position ${i}, expected ${expected}`);
    this.fail(`Unexpected character ${describeChar(this.src.charCodeAt(i))} at position ${i}, expected ${expected}`);
  }

  private skipWs(): void {
    const s = this.src;
    let i = this.pos;
    for (;;) {
      const c = s.charCodeAt(i);
      if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i++;
      else break;
    }
    this.pos = i;
  }

  parseDocument(): JsonValue {
    this.skipWs();
    const v = this.parseValue(0);
    this.skipWs();
    if (this.pos < this.src.length) this.unexpected('end of input');
    return v;
  }

  private parseValue(depth: number): JsonValue {
    const c = this.src.charCodeAt(this.pos);
    switch (c) {
      case 0x7b: // {
        return this.parseObject(depth + 1);
      case 0x5b: // [
        return this.parseArray(depth + 1);
      case 0x22: // "
        return this.parseString(undefined);
      case 0x74: // t
        return this.parseLiteral('true', true);
      case 0x66: // f
        return this.parseLiteral('false', false);
      case 0x6e: // n
        return this.parseLiteral('null', null);
      default:
        if (c === 0x2d || (c >= 0x30 && c <= 0x39)) return this.parseNumber();
        return this.unexpected('a JSON value');
    }
  }

  private parseLiteral<T extends boolean | null>(word: string, value: T): T {
    if (!this.src.startsWith(word, this.pos)) {
      // Point at the first character that differs.
      let i = 0;
      while (i < word.length && this.src.charCodeAt(this.pos + i) === word.charCodeAt(i)) i++;
      this.pos += i;
      this.unexpected(`'${word}'`);
    }
    this.pos += word.length;
    return value;
  }

  private parseNumber(): JsonNumber {
    const s = this.src;
    const start = this.pos;
    let i = start;
    let c = s.charCodeAt(i);
    if (c === 0x2d) c = s.charCodeAt(++i);
    if (c === 0x30) {
      c = s.charCodeAt(++i);
    } else if (c >= 0x31 && c <= 0x39) {
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    } else {
      this.pos = i;
      this.unexpected('a digit');
    }
    if (c === 0x2e) {
      c = s.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) {
        this.pos = i;
        this.unexpected('a digit after the decimal point');
      }
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    }
    if (c === 0x65 || c === 0x45) {
      c = s.charCodeAt(++i);
      if (c === 0x2b || c === 0x2d) c = s.charCodeAt(++i);
      if (!(c >= 0x30 && c <= 0x39)) {
        this.pos = i;
        this.unexpected('a digit in the exponent');
      }
      do c = s.charCodeAt(++i);
      while (c >= 0x30 && c <= 0x39);
    }
    this.pos = i;
    return new JsonNumber(s.slice(start, i));
  }

  /** `keyContext` is 'key' for an object key: a lone-surrogate error then names the key itself. */
  private parseString(keyContext: 'key' | undefined): string {
    const s = this.src;
    const n = s.length;
    const open = this.pos;
    let i = open + 1;
    let start = i;
    let out = '';
    let sawSurrogate = false;
    for (;;) {
      if (i >= n) {
        this.pos = i;
        this.fail(`Unterminated string starting at position ${open}`);
      }
      const c = s.charCodeAt(i);
      if (c === 0x22) {
        out += s.slice(start, i);
        i++;
        break;
      }
      if (c === 0x5c) {
        out += s.slice(start, i);
        const e = s.charCodeAt(i + 1);
        switch (e) {
          case 0x22: out += '"'; break;
          case 0x5c: out += '\\'; break;
          case 0x2f: out += '/'; break;
          case 0x62: out += '\b'; break;
          case 0x66: out += '\f'; break;
          case 0x6e: out += '\n'; break;
          case 0x72: out += '\r'; break;
          case 0x74: out += '\t'; break;
          case 0x75: {
            let code = 0;
            for (let k = 2; k < 6; k++) {
              const h = hexVal(s.charCodeAt(i + k));
              if (h < 0) {
                this.pos = i + k;
                this.unexpected('a hex digit in a \\u escape');
              }
              code = code * 16 + h;
            }
            if (code >= 0xd800 && code <= 0xdfff) sawSurrogate = true;
            out += String.fromCharCode(code);
            i += 4;
            break;
          }
          default:
            this.pos = i + 1;
            this.unexpected('a valid escape character');
        }
        i += 2;
        start = i;
        continue;
      }
      if (c < 0x20) {
        this.pos = i;
        this.fail(`Unescaped control character ${describeChar(c)} in string at position ${i}`);
      }
      if (c >= 0xd800 && c <= 0xdfff) sawSurrogate = true;
      i++;
    }
    this.pos = i;
    if (sawSurrogate && hasLoneSurrogate(out)) {
      const what = keyContext === 'key' ? 'object key' : 'string';
      this.fail(`Lone surrogate (invalid Unicode) in ${what} starting at position ${open}`, keyContext === 'key' ? out : undefined);
    }
    return out;
  }

  private parseArray(depth: number): JsonValue[] {
    if (depth > MAX_JSON_DEPTH) this.fail(`Nesting deeper than ${MAX_JSON_DEPTH} at position ${this.pos}`);
    const s = this.src;
    this.pos++;
    const arr: JsonValue[] = [];
    this.skipWs();
    if (s.charCodeAt(this.pos) === 0x5d) {
      this.pos++;
      return arr;
    }
    for (;;) {
      this.segments.push(arr.length);
      arr.push(this.parseValue(depth));
      this.segments.pop();
      this.skipWs();
      const c = s.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        this.skipWs();
      } else if (c === 0x5d) {
        this.pos++;
        return arr;
      } else {
        this.unexpected("',' or ']'");
      }
    }
  }

  private parseObject(depth: number): { [key: string]: JsonValue } {
    if (depth > MAX_JSON_DEPTH) this.fail(`Nesting deeper than ${MAX_JSON_DEPTH} at position ${this.pos}`);
    const s = this.src;
    this.pos++;
    const obj: { [key: string]: JsonValue } = {};
    this.skipWs();
    if (s.charCodeAt(this.pos) === 0x7d) {
      this.pos++;
      return obj;
    }
    for (;;) {
      if (s.charCodeAt(this.pos) !== 0x22) this.unexpected('a string (object key)');
      const keyPos = this.pos;
      const key = this.parseString('key');
      if (Object.hasOwn(obj, key)) this.fail(`Duplicate object key at position ${keyPos}`, key);
      this.skipWs();
      if (s.charCodeAt(this.pos) !== 0x3a) this.unexpected("':'");
      this.pos++;
      this.skipWs();
      this.segments.push(key);
      setOwn(obj, key, this.parseValue(depth));
      this.segments.pop();
      this.skipWs();
      const c = s.charCodeAt(this.pos);
      if (c === 0x2c) {
        this.pos++;
        this.skipWs();
      } else if (c === 0x7d) {
        this.pos++;
        return obj;
      } else {
        this.unexpected("',' or '}'");
      }
    }
  }
}

/**
 * Strict RFC 8259 reader. Numbers become JsonNumber with their exact text; objects are ordinary
 * objects whose `__proto__` key (if any) is an own property. No BOM, no comments, no trailing commas.
 */
export function readJson(text: string): { ok: true; value: JsonValue } | { ok: false; error: ReadError } {
  try {
    return { ok: true, value: new Parser(text).parseDocument() };
  } catch (e) {
    if (e instanceof ParseFailure) return { ok: false, error: { message: e.message, path: e.path } };
    throw e;
  }
}

/** A JSON object (not an array, not null, not a number). */
export function isJsonObject(v: JsonValue | undefined): v is { [key: string]: JsonValue } {
  return typeof v === 'object' && v !== null && !Array.isArray(v) && !(v instanceof JsonNumber);
}

/** The same tree with JsonNumber as `Number(text)`, for JSON-schema type checks. */
export function toPlain(v: JsonValue): unknown {
  if (v === null || typeof v !== 'object') return v;
  if (v instanceof JsonNumber) return Number(v.text);
  if (Array.isArray(v)) return v.map(toPlain);
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(v)) setOwn(out, k, toPlain(v[k] as JsonValue));
  return out;
}

/** An object as JSON.parse makes one: not null, not an array. */
export function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/**
 * Whether the JSON text nests arrays and objects deeper than `max` (strings skipped, escapes
 * included). A scan without parsing, so text from an untrusted source is refused before any
 * recursive code (canonicalisation, comparison) meets it; malformed text is left to the parser.
 */
export function nestedDeeperThan(text: string, max: number): boolean {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // a backslash: the next character is escaped
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return true;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return false;
}
