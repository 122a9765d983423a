// The canon_v1 payload of a signed decision, built by the caller without the assertion endpoint
// (docs/canon_v1.md section 3). Plain JavaScript with no dependencies and none of the service's
// code: copy it into an agent. Its output must equal the assertion endpoint's `payload` byte
// for byte; the service's tests check that it does.
//
//   import { decisionPayload } from './canon-payload.mjs';
//   const payload = decisionPayload({ agent: 'my-agent', nonce: 'n-1', fields: { symbol: 'AAPL', action: 'BUY', quantity: '1.50' } });
//
// `fields` is exactly what you send as the body of POST /v1/decisions, without `signature`.
// Send Decimals as strings (or as JS numbers, which JSON.stringify writes as String(n) writes
// them, so the service reads the same text): they are normalised here as the service does.

const DECIMAL_FIELDS = new Set(['target_allocation_pct', 'quantity', 'notional', 'confidence']);
const DEFAULTS = { asset_class: 'US_EQUITY', currency: 'USD' };
const DECIMAL = /^(-?)(0|[1-9][0-9]*)(?:\.([0-9]+))?(?:[eE]([+-]?[0-9]+))?$/;
const MAX_DECIMAL_LENGTH = 64;

/** canon_v1 section 2: the normalised decimal string of a number's JSON text. */
export function normaliseDecimal(text) {
  const m = DECIMAL.exec(text);
  if (!m) throw new Error(`not a decimal in JSON number syntax: ${text}`);
  const [, sign, int, frac = '', exp = '0'] = m;
  const exponent = Number(exp) - frac.length;
  const digits = (int + frac).replace(/^0+/, '');
  if (digits === '') return '0';
  if (Math.abs(exponent) > 2 * MAX_DECIMAL_LENGTH) throw new Error(`decimal too long: ${text}`);
  let out;
  if (exponent >= 0) {
    out = digits + '0'.repeat(exponent);
  } else {
    const point = digits.length + exponent;
    const whole = point > 0 ? digits.slice(0, point) : '0';
    const fraction = (point > 0 ? digits.slice(point) : '0'.repeat(-point) + digits).replace(/0+$/, '');
    out = fraction === '' ? whole : `${whole}.${fraction}`;
  }
  out = sign + out;
  if (out.length > MAX_DECIMAL_LENGTH) throw new Error(`decimal too long: ${text}`);
  return out;
}

/**
 * canon_v1 section 1: RFC 8785 member order (UTF-16 code units, which is JavaScript's default
 * string sort), no whitespace, strings as JSON.stringify writes them, numbers as normalised
 * decimal strings.
 */
export function canonicalJson(value) {
  if (value === null || typeof value === 'boolean') return String(value);
  if (typeof value === 'number') {
    if (!Number.isFinite(value)) throw new Error('not a finite number');
    return JSON.stringify(normaliseDecimal(String(value)));
  }
  if (typeof value === 'string') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (typeof value === 'object') {
    const members = Object.keys(value).sort().map((k) => `${JSON.stringify(k)}:${canonicalJson(value[k])}`);
    return `{${members.join(',')}}`;
  }
  throw new Error(`cannot serialise a ${typeof value}`);
}

/** The content document of canon_v1 section 3, serialised: the exact string to sign. */
export function decisionPayload({ agent, fields, nonce }) {
  const document = { canon: 'canon_v1', type: 'decision', agent, ...DEFAULTS };
  for (const [name, value] of Object.entries(fields)) {
    if (name === 'signature' || name === 'nonce') throw new Error(`${name} is not a decision field`);
    document[name] = DECIMAL_FIELDS.has(name) ? normaliseDecimal(String(value)) : value;
  }
  if (nonce !== undefined) document.nonce = nonce;
  return canonicalJson(document);
}
