// Decision requests (ledger-interface §2.2) -> canon_v1 content documents (canon_v1 §3).
// It owns the semantic rules JSON Schema cannot express (decimal grammar and ranges, occurred_at
// window, defaults) and the exact content document that is hashed and signed. The HTTP schema
// runs first; the type/enum/length checks here are a defensive repeat of it.

import { normaliseNumbers, type CanonValue } from './canon.ts';
import { CANON } from './chain.ts';
import { compareDecimal, normaliseDecimal, MAX_DECIMAL_LENGTH } from './decimal.ts';
import { JsonNumber, hasLoneSurrogate, isJsonObject, joinPath, setOwn, type JsonValue } from './json.ts';
import { parseRfc3339 } from './time.ts';

export const DECISION_DECIMAL_FIELDS = ['target_allocation_pct', 'quantity', 'notional', 'confidence'] as const;

export const DECISION_ACTIONS = ['BUY', 'SELL', 'HOLD', 'INCREASE', 'REDUCE', 'CLOSE'] as const;
export const ASSET_CLASSES = ['US_EQUITY', 'CRYPTO', 'ETF', 'PREDICTION_MARKET', 'PERPETUAL', 'OTHER'] as const;

/** Every field a decision may carry (besides `signature`, which is never content). */
export const DECISION_FIELDS = [
  'symbol',
  'action',
  'asset_class',
  'target_allocation_pct',
  'quantity',
  'notional',
  'currency',
  'confidence',
  'time_horizon',
  'thesis',
  'metadata',
  'occurred_at',
] as const;

export const DECISION_DEFAULTS = { asset_class: 'US_EQUITY', currency: 'USD' } as const;

/** occurred_at may be at most this far before the service's clock. */
export const OCCURRED_AT_MAX_AGE_MS = 7 * 24 * 60 * 60 * 1000;

export type FieldError = { param: string; message: string };

type Fields = { [key: string]: JsonValue };

const DECIMAL_RANGES: { [field: string]: [string, string] } = {
  target_allocation_pct: ['0', '100'],
  confidence: ['0', '1'],
};

/** Length in Unicode code points, as JSON Schema's maxLength counts. */
function codePointLength(s: string): number {
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
      const d = s.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i++;
    }
    n++;
  }
  return n;
}

const isObject = (v: JsonValue | undefined): v is Fields => isJsonObject(v);

/** U+0000..U+001F and U+007F: never part of a symbol, a currency code or a time_horizon. */
const CONTROL_CHARACTER = /[\u0000-\u001F\u007F]/;

/** The refusal of a field holding a control character (the HTTP schema's pattern says the same). */
export const controlCharacterMessage = (name: string) => `${name} cannot hold control characters (line breaks, tabs, NUL)`;

/** First path in `v` holding a string or key with a lone surrogate, or null. */
function loneSurrogatePath(v: JsonValue, path: string): string | null {
  if (typeof v === 'string') return hasLoneSurrogate(v) ? path : null;
  if (v === null || typeof v !== 'object' || v instanceof JsonNumber) return null;
  if (Array.isArray(v)) {
    for (let i = 0; i < v.length; i++) {
      const p = loneSurrogatePath(v[i] as JsonValue, joinPath(path, i));
      if (p !== null) return p;
    }
    return null;
  }
  for (const k of Object.keys(v)) {
    if (hasLoneSurrogate(k)) return joinPath(path, k.replace(/[\uD800-\uDFFF]/gu, '\uFFFD'));
    const p = loneSurrogatePath(v[k] as JsonValue, joinPath(path, k));
    if (p !== null) return p;
  }
  return null;
}

function checkString(
  fields: Fields,
  name: string,
  rule: { required?: boolean; maxLength?: number; exactLength?: number; oneOf?: readonly string[]; noControl?: boolean },
): FieldError | null {
  if (!Object.hasOwn(fields, name)) return rule.required ? { param: name, message: `${name} is required` } : null;
  const v = fields[name];
  if (typeof v !== 'string') return { param: name, message: `${name} must be a string` };
  if (rule.oneOf && !rule.oneOf.includes(v)) return { param: name, message: `${name} must be one of ${rule.oneOf.join(', ')}` };
  if (rule.noControl && CONTROL_CHARACTER.test(v)) return { param: name, message: controlCharacterMessage(name) };
  const len = rule.maxLength !== undefined || rule.exactLength !== undefined ? codePointLength(v) : 0;
  if (rule.maxLength !== undefined && len > rule.maxLength) {
    return { param: name, message: `${name} must be at most ${rule.maxLength} characters` };
  }
  if (rule.exactLength !== undefined && len !== rule.exactLength) {
    return { param: name, message: `${name} must be exactly ${rule.exactLength} characters` };
  }
  return null;
}

/** Checks occurred_at against RFC 3339 and the window [now − 7 days, now]. */
export function checkOccurredAt(value: string, now: Date): FieldError | null {
  const param = 'occurred_at';
  const t = parseRfc3339(value);
  if (!t.ok) {
    return t.reason === 'format'
      ? { param, message: 'occurred_at must be an RFC 3339 date-time with a time-zone offset (Z or ±hh:mm), e.g. 2025-01-31T14:05:00Z' }
      : { param, message: 'occurred_at is not a real calendar date and time' };
  }
  const nowMs = now.getTime();
  if (!Number.isFinite(nowMs)) throw new RangeError('checkOccurredAt: invalid now');
  if (t.epochMs > nowMs || (t.epochMs === nowMs && t.subMillisecond)) {
    return { param, message: 'occurred_at cannot be in the future' };
  }
  if (t.epochMs < nowMs - OCCURRED_AT_MAX_AGE_MS) {
    return { param, message: 'occurred_at cannot be more than 7 days old' };
  }
  return null;
}

/**
 * Builds the canon_v1 content document of a decision: `{ canon, type, agent, ...fields, nonce? }`
 * with every number normalised and the defaults applied. `fields` is the request body without
 * `signature` and `nonce`.
 */
export function decisionContent(input: {
  agent: string;
  fields: { [key: string]: JsonValue };
  nonce?: string;
  now: Date;
}): { ok: true; document: CanonValue } | { ok: false; error: FieldError } {
  const { agent, fields, nonce, now } = input;
  if (typeof agent !== 'string' || agent === '') throw new TypeError('decisionContent: agent must be a non-empty string');
  if (nonce !== undefined && typeof nonce !== 'string') throw new TypeError('decisionContent: nonce must be a string');
  if (!isObject(fields)) return { ok: false, error: { param: '', message: 'the request body must be a JSON object' } };

  const known: readonly string[] = DECISION_FIELDS;
  for (const k of Object.keys(fields)) {
    if (!known.includes(k)) return { ok: false, error: { param: k, message: `${k} is not a decision field` } };
  }

  const stringError =
    checkString(fields, 'symbol', { required: true, maxLength: 20, noControl: true }) ??
    checkString(fields, 'action', { required: true, oneOf: DECISION_ACTIONS }) ??
    checkString(fields, 'asset_class', { oneOf: ASSET_CLASSES }) ??
    checkString(fields, 'currency', { exactLength: 3, noControl: true }) ??
    checkString(fields, 'time_horizon', { maxLength: 120, noControl: true }) ??
    checkString(fields, 'thesis', { maxLength: 8000 }) ??
    checkString(fields, 'occurred_at', {});
  if (stringError) return { ok: false, error: stringError };

  const document: { [key: string]: CanonValue } = { canon: CANON, type: 'decision', agent };
  for (const name of DECISION_FIELDS) {
    if (!Object.hasOwn(fields, name)) continue;
    const value = fieldValue(name, fields[name] as JsonValue, now);
    if (!value.ok) return value;
    setOwn(document, name, value.value);
  }

  if (!Object.hasOwn(document, 'asset_class')) document.asset_class = DECISION_DEFAULTS.asset_class;
  if (!Object.hasOwn(document, 'currency')) document.currency = DECISION_DEFAULTS.currency;
  if (nonce !== undefined) {
    if (hasLoneSurrogate(nonce)) return { ok: false, error: { param: 'nonce', message: 'nonce holds a lone surrogate (invalid Unicode)' } };
    document.nonce = nonce;
  }
  if (hasLoneSurrogate(agent)) throw new TypeError('decisionContent: agent holds a lone surrogate');
  return { ok: true, document };
}

type FieldValue = { ok: true; value: CanonValue } | { ok: false; error: FieldError };

/** One field's value in the content document: decimals normalised, metadata's numbers too, strings checked. */
function fieldValue(name: string, v: JsonValue, now: Date): FieldValue {
  if ((DECISION_DECIMAL_FIELDS as readonly string[]).includes(name)) return decimalValue(name, v);
  if (name === 'metadata') return metadataValue(v);
  const s = v as string; // checked by checkString before
  if (hasLoneSurrogate(s)) return { ok: false, error: { param: name, message: `${name} holds a lone surrogate (invalid Unicode)` } };
  if (name === 'occurred_at') {
    const err = checkOccurredAt(s, now);
    if (err) return { ok: false, error: err };
  }
  return { ok: true, value: s };
}

function decimalValue(name: string, v: JsonValue): FieldValue {
  const text = v instanceof JsonNumber ? v.text : typeof v === 'string' ? v : null;
  if (text === null) return { ok: false, error: { param: name, message: `${name} must be a decimal number or a string holding one` } };
  const r = normaliseDecimal(text);
  if (!r.ok) {
    const message =
      r.reason === 'grammar'
        ? `${name} must be a decimal in JSON number syntax (e.g. 12.5, -0.25, 1e3)`
        : `${name} is too long: its normalised form exceeds ${MAX_DECIMAL_LENGTH} characters`;
    return { ok: false, error: { param: name, message } };
  }
  const range = DECIMAL_RANGES[name];
  if (range && (compareDecimal(r.value, range[0]) < 0 || compareDecimal(r.value, range[1]) > 0)) {
    return { ok: false, error: { param: name, message: `${name} must be between ${range[0]} and ${range[1]}` } };
  }
  return { ok: true, value: r.value };
}

function metadataValue(v: JsonValue): FieldValue {
  if (!isObject(v)) return { ok: false, error: { param: 'metadata', message: 'metadata must be a JSON object' } };
  const r = normaliseNumbers(v, 'metadata');
  if (!r.ok) {
    return { ok: false, error: { param: r.path, message: `${r.path} is too long: its normalised decimal form exceeds ${MAX_DECIMAL_LENGTH} characters` } };
  }
  const bad = loneSurrogatePath(v, 'metadata');
  if (bad !== null) return { ok: false, error: { param: bad, message: `${bad} holds a lone surrogate (invalid Unicode)` } };
  return { ok: true, value: r.value };
}
