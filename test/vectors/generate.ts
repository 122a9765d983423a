// Generates the canon_v1 test vectors in test/vectors/canon_v1/ ONCE.
// Vectors never change after release: this refuses to overwrite any existing file unless
// --force is given. Run: node --import tsx test/vectors/generate.ts [--force]
// Expected values come from src/core; they were cross-checked by hand and with independent
// tools (sha256sum, Python's json/decimal/hashlib) when first generated.

import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import {
  b64urlEncode,
  canonicalJson,
  chainEntry,
  chainHash,
  contentHash,
  decisionContent,
  normaliseDecimal,
  normaliseNumbers,
  readJson,
  sha256Hex,
  utf8,
  type CanonValue,
  type ChainEntryInput,
  type ChainRecord,
  type JsonValue,
  type SignatureEnvelope,
} from '../../src/core/index.ts';

ed.hashes.sha512 = sha512;

const OUT = join(dirname(fileURLToPath(import.meta.url)), 'canon_v1');
const force = process.argv.includes('--force');

const hex = (b: Uint8Array): string => Buffer.from(b).toString('hex');
const fromHex = (h: string): Uint8Array => new Uint8Array(Buffer.from(h, 'hex'));

// ---------------------------------------------------------------------------------------------
// keypair.json: RFC 8032 §7.1 TEST 1, so any Ed25519 library can confirm it independently.

const SEED_HEX = '9d61b19deffd5a60ba844af492ec2cc44449c5697b326919703bac031cae7f60';
const RFC8032_PUBLIC_HEX = 'd75a980182b10ab7d54bfed3c964073a0ee172f3daa62325af021a68f707511a';
const seed = fromHex(SEED_HEX);
const publicKey = ed.getPublicKey(seed);
if (hex(publicKey) !== RFC8032_PUBLIC_HEX) throw new Error('public key differs from RFC 8032 TEST 1');
const KEY_ID = 'aid_01JX0Y2W4S6V8Z0B2D4F6H8K0M';

const keypair = {
  description:
    'Fixed Ed25519 test keypair: RFC 8032 section 7.1 TEST 1. For tests only; never register it on a real service.',
  key_id: KEY_ID,
  seed_hex: SEED_HEX,
  public_key_hex: hex(publicKey),
  public_key_b64url: b64urlEncode(publicKey),
};

const sign = (payload: string): string => b64urlEncode(ed.sign(utf8(payload), seed));

// ---------------------------------------------------------------------------------------------
// decimals.json

const decimalInputs: string[] = [
  // plain forms
  '0', '1', '-1', '10', '123', '-987654321', '0.5', '-0.5', '0.1', '3.14159',
  // trailing zeros, zero forms, negative zero
  '1.50', '1.0', '100.000', '0.000', '0.0', '-0', '-0.0', '-0.000e5', '0e0', '0e-999999999', '0e999999999',
  // exponents
  '1e3', '1E3', '1e+3', '1e-3', '1E-3', '-2.5E-3', '2.5e1', '12e-1', '100e-2', '1000e-5', '0.0001e4',
  '123.456e1', '123.456e-1', '123.456e3', '123.456e-3', '1.5e2', '2.75E+4', '1e0', '1e-0', '1e+0',
  '1e0000000000000000000000001', '5e-1', '-5e-1',
  // beyond float precision: exact digits survive
  '9007199254740993', '0.1000000000000000055511151231257827', '-123456789012345678901234567890.123456789',
  // the 64-character bound (sign counts)
  '1e63', '1e64', '-1e62', '-1e63', '1e-62', '1e-63', '-1e-61', '-1e-62',
  '1234567890123456789012345678901234567890123456789012345678901234',
  '12345678901234567890123456789012345678901234567890123456789012345',
  '-123456789012345678901234567890123456789012345678901234567890123',
  '-1234567890123456789012345678901234567890123456789012345678901234',
  '1.' + '0'.repeat(200), '0.' + '0'.repeat(61) + '1', '0.' + '0'.repeat(62) + '1',
  '1' + '0'.repeat(100) + 'e-100',
  // refused cheaply
  '1e999999999', '1e-999999999', '-1e999999999', '1e' + '9'.repeat(40), '1e-' + '9'.repeat(40),
  // not the grammar
  '007', '01', '-01', '00', '1.', '.5', '-.5', '+1', '1e', '1e+', '1e-', '--1', '-', '', ' 1', '1 ', '1,5',
  '0x10', '1_000', 'Infinity', '-Infinity', 'NaN', '1.5.2', '1e5.5', '1ee5', '\u0661', '１', '1d3', 'e5',
];

const decimals = {
  description:
    'canon_v1 section 2. input: the Decimal text (as written in a JSON number, or the content of a JSON string); output: the normalised form; error: "grammar" (not the JSON number grammar) or "too_long" (normalised form longer than 64 characters, sign included).',
  vectors: decimalInputs.map((input) => {
    const r = normaliseDecimal(input);
    return r.ok ? { input, output: r.value } : { input, error: r.reason };
  }),
};

// ---------------------------------------------------------------------------------------------
// canonical.json: input is JSON text; output is canon_v1 after number normalisation.

const allControls = Array.from({ length: 0x20 }, (_, i) => String.fromCharCode(i)).join('');
const canonicalInputs: { name: string; input: string }[] = [
  { name: 'literals and empties', input: '[null,true,false,{},[],""]' },
  { name: 'whitespace is dropped', input: ' \t\r\n{ "b" : [ 1 , 2 ] ,\n\t"a" : { } } \n' },
  {
    name: 'keys sorted by UTF-16 code units, not code points',
    input: String.raw`{"\uff61":1,"\ud83d\ude00":2,"\u00e9":3,"e":4,"E":5,"":6,"aa":7,"a":8,"b":9,"\u007f":10,"\u0080":11,"\ue000":12,"\uffff":13,"\ud800\udc00":14,"\u0000":15}`,
  },
  {
    name: 'every control character, quote, backslash, slash, DEL, U+2028, U+2029',
    input: JSON.stringify({ s: allControls + '"\\/\u007f\u2028\u2029' }),
  },
  {
    name: 'escaped and raw forms of the same string are equal',
    input: String.raw`["caf\u00e9","café","\ud83d\ude00","😀","\/","/","\u0041"]`,
  },
  {
    name: 'non-ASCII kept as itself (no NFC: e + combining acute stays two characters)',
    input: String.raw`{"nfd":"e\u0301","nfc":"\u00e9","cjk":"日本語","rtl":"עברית","bom":"\ufeff","nonchar":"\uffff"}`,
  },
  {
    name: 'numbers at any depth become normalised decimal strings',
    input:
      '{"metadata":{"a":{"b":[1,2.50,-0.0,1e3,"1e3",{"c":-2.5E-3}]},"big":9007199254740993,"tiny":1e-62,"neg":-100e-2},"n":0}',
  },
  { name: '__proto__ is an ordinary key', input: '{"__proto__":{"x":1},"constructor":"c","toString":"t"}' },
  { name: 'deep nesting (64 levels)', input: '['.repeat(62) + '{"k":[]}' + ']'.repeat(62) },
  { name: 'too long decimal deep in metadata', input: '{"metadata":{"a":{"b":[1,2,1e64]}}}' },
  { name: 'duplicate key', input: '{"a":1,"b":{"c":1,"c":2}}' },
  { name: 'lone high surrogate escaped', input: String.raw`{"a":["\ud800"]}` },
  { name: 'lone low surrogate escaped', input: String.raw`{"a":"x\udc00y"}` },
  { name: 'reversed surrogate pair escaped', input: String.raw`{"a":"\ude00\ud83d"}` },
  { name: 'lone surrogate raw', input: '{"a":"\ud800"}' },
  { name: 'lone surrogate in a key', input: String.raw`{"m":{"\udfff":1}}` },
  { name: 'nesting deeper than 64', input: '['.repeat(65) + ']'.repeat(65) },
];

type CanonicalVector =
  | { name: string; input: string; output: string; sha256: string }
  | { name: string; input: string; error: { stage: 'read' | 'normalise'; path: string } };

const canonical = {
  description:
    'canon_v1 sections 1-2. input: JSON text; read strictly (duplicate keys, lone surrogates and nesting deeper than 64 rejected), every number normalised (section 2), then serialised. output: canon_v1 text; sha256: lowercase hex of sha256(UTF-8 of output). error.path: dotted path of the offending place.',
  vectors: canonicalInputs.map(({ name, input }): CanonicalVector => {
    const read = readJson(input);
    if (!read.ok) return { name, input, error: { stage: 'read', path: read.error.path } };
    const norm = normaliseNumbers(read.value);
    if (!norm.ok) return { name, input, error: { stage: 'normalise', path: norm.path } };
    const output = canonicalJson(norm.value);
    return { name, input, output, sha256: sha256Hex(output) };
  }),
};

// ---------------------------------------------------------------------------------------------
// decisions.json

const AGENT = 'momentum-bot';
const NOW = '2025-06-02T12:00:00.000Z';

type DecisionCase = { name: string; body: string; nonce?: string; now?: string; agent?: string };

const FULL_BODY = String.raw`{"symbol":"AAPL","action":"INCREASE","asset_class":"US_EQUITY","target_allocation_pct":12.50,"quantity":"1.5e2","notional":2.75E+4,"currency":"USD","confidence":"0.80","time_horizon":"3-6 months","thesis":"Services margin keeps expanding.\nRisk: China demand \u2014 see note\u2028end. Caf\u00e9 \ud83d\ude00 \"quoted\" \\ back\\slash\ttab","metadata":{"model":"gpt-x","scores":[0.1,1e-1,"0.10",-0.0,100e-2],"nested":{"z":1,"a":{"deep":-2.50E-3}},"flag":true,"none":null},"occurred_at":"2025-06-02T13:59:59.999+02:00"}`;
const FULL_BODY_PRETTY = [
  '{',
  '\t"occurred_at" : "2025-06-02T13:59:59.999+02:00",',
  '\t"metadata" : { "none" : null , "flag" : true ,',
  '\t\t"nested" : { "a" : { "deep" : -0.0025 } , "z" : 1.0 } ,',
  '\t\t"scores" : [ 1e-1 , 0.1 , "0.10" , 0 , 1 ] , "model" : "gpt-x" } ,',
  String.raw`  "thesis" : "Services margin keeps expanding.\nRisk: China demand — see note` + '\u2028' + String.raw`end. Café 😀 \"quoted\" \\ back\\slash\ttab",`,
  '  "time_horizon":"3-6 months", "confidence":0.8, "currency":"USD", "notional":"27500",',
  '  "quantity":150, "target_allocation_pct":"1.25e1", "asset_class":"US_EQUITY",',
  '  "action":"INCREASE", "symbol":"AAPL"\r\n}\r\n',
].join('\r\n');

const decisionCases: DecisionCase[] = [
  { name: 'minimal: defaults applied', body: '{"symbol":"AAPL","action":"BUY"}' },
  { name: 'every field, numbers in every form', body: FULL_BODY },
  { name: 'same decision written differently gives the same payload', body: FULL_BODY_PRETTY },
  { name: 'signed: nonce joins the content', body: FULL_BODY, nonce: 'n_7f3c9a1e2b4d4e6f' },
  {
    name: 'explicit asset_class and currency, range boundaries, decimals as strings',
    body: '{"symbol":"BTC-USD","action":"REDUCE","asset_class":"CRYPTO","currency":"EUR","target_allocation_pct":"100.000","confidence":-0.0,"quantity":"0.00012345","notional":"-1e-2"}',
  },
  {
    name: 'metadata with __proto__ and unicode keys',
    body: String.raw`{"symbol":"X","action":"HOLD","metadata":{"__proto__":{"p":1},"\uff61":2,"\ud83d\ude00":3,"list":[[],{},[1e2]]}}`,
  },
  { name: 'occurred_at exactly 7 days before now', body: '{"symbol":"AAPL","action":"SELL","occurred_at":"2025-05-26T12:00:00Z"}' },
  { name: 'occurred_at exactly now, lower-case t and z', body: '{"symbol":"AAPL","action":"SELL","occurred_at":"2025-06-02t12:00:00.000z"}' },
  { name: 'occurred_at with negative offset', body: '{"symbol":"AAPL","action":"CLOSE","occurred_at":"2025-06-01T23:30:00.5-05:30"}' },
  { name: 'leap year day', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2024-02-29T10:00:00Z"}', now: '2024-03-01T00:00:00.000Z' },
  // errors
  { name: 'target_allocation_pct above 100', body: '{"symbol":"AAPL","action":"BUY","target_allocation_pct":100.0000001}' },
  { name: 'target_allocation_pct negative', body: '{"symbol":"AAPL","action":"BUY","target_allocation_pct":"-1e-9"}' },
  { name: 'confidence above 1', body: '{"symbol":"AAPL","action":"BUY","confidence":"1.5"}' },
  { name: 'decimal string not the grammar', body: '{"symbol":"AAPL","action":"BUY","quantity":"007"}' },
  { name: 'decimal string with spaces', body: '{"symbol":"AAPL","action":"BUY","notional":" 12"}' },
  { name: 'decimal too long (number)', body: '{"symbol":"AAPL","action":"BUY","quantity":1e999999999}' },
  { name: 'decimal too long (string)', body: '{"symbol":"AAPL","action":"BUY","quantity":"1e-999999999"}' },
  { name: 'decimal of the wrong type', body: '{"symbol":"AAPL","action":"BUY","quantity":true}' },
  { name: 'metadata decimal too long', body: '{"symbol":"AAPL","action":"BUY","metadata":{"a":{"b":[1,2,1e999]}}}' },
  { name: 'occurred_at in the future by 1 ms', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-02T12:00:00.001Z"}' },
  { name: 'occurred_at in the future by a microsecond', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-02T12:00:00.000001Z"}' },
  { name: 'occurred_at 7 days and 1 ms old', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-05-26T11:59:59.999Z"}' },
  { name: 'occurred_at without offset', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-01T12:00:00"}' },
  { name: 'occurred_at date only', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-01"}' },
  { name: 'occurred_at Feb 30', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-02-30T00:00:00Z"}', now: '2025-03-03T00:00:00.000Z' },
  { name: 'occurred_at month 13', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-13-01T00:00:00Z"}' },
  { name: 'occurred_at hour 24', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-01T24:00:00Z"}' },
  { name: 'occurred_at Feb 29 in a common year', body: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-02-29T10:00:00Z"}', now: '2025-03-01T00:00:00.000Z' },
  { name: 'duplicate key', body: '{"symbol":"AAPL","action":"BUY","symbol":"MSFT"}' },
  { name: 'lone surrogate in thesis', body: String.raw`{"symbol":"AAPL","action":"BUY","thesis":"\ud83d"}` },
  { name: 'unknown field', body: '{"symbol":"AAPL","action":"BUY","colour":"red"}' },
];

type DecisionVector = {
  name: string;
  agent: string;
  now: string;
  body: string;
  nonce?: string;
  payload?: string;
  content_hash?: string;
  signature?: string;
  error?: { stage: 'read' | 'content'; param: string };
};

const decisions = {
  description:
    'canon_v1 section 3 with ledger-interface 2.2. body: the raw JSON text of the decision fields (the request body without `signature`); nonce: the signature nonce of a signed decision; now: the service clock. payload: canon_v1(content document), the exact string an agent signs; content_hash: its sha256. signature: Ed25519 over payload with keypair.json, base64url. error.param names the offending field (stage read: the JSON reader\'s path).',
  vectors: decisionCases.map((c): DecisionVector => {
    const agent = c.agent ?? AGENT;
    const now = c.now ?? NOW;
    const base: DecisionVector = { name: c.name, agent, now, body: c.body };
    if (c.nonce !== undefined) base.nonce = c.nonce;
    const read = readJson(c.body);
    if (!read.ok) return { ...base, error: { stage: 'read', param: read.error.path } };
    const fields = read.value as { [key: string]: JsonValue };
    const r = decisionContent({ agent, fields, nonce: c.nonce, now: new Date(now) });
    if (!r.ok) return { ...base, error: { stage: 'content', param: r.error.param } };
    const payload = canonicalJson(r.document);
    const v: DecisionVector = { ...base, payload, content_hash: sha256Hex(payload) };
    if (c.nonce !== undefined) v.signature = sign(payload);
    return v;
  }),
};

// ---------------------------------------------------------------------------------------------
// chains.json: one agent, three records (unsigned decision, signed decision, execution).

function content(body: string, nonce?: string, now = NOW): CanonValue {
  const read = readJson(body);
  if (!read.ok) throw new Error(read.error.message);
  const r = decisionContent({ agent: AGENT, fields: read.value as { [key: string]: JsonValue }, nonce, now: new Date(now) });
  if (!r.ok) throw new Error(r.error.message);
  return r.document;
}

const executionContent: CanonValue = {
  canon: 'canon_v1',
  type: 'execution',
  agent: AGENT,
  broker: 'alpaca',
  broker_order_id: '61e69015-8549-4bfd-b9c3-01e75843f47d',
  client_order_id: 'lt_8h3k2m9q4r7t1v5x0z2b6d8f0gj',
  symbol: 'AAPL',
  side: 'buy',
  quantity: '150',
  price: '187.23',
  filled_at: '2025-06-02T12:05:30.412Z',
};

type Draft = { id: string; type: 'decision' | 'execution'; recorded_at: string; content: CanonValue; nonce?: string };
const drafts: Draft[] = [
  {
    id: 'dec_01JX0Z6Q4M8T2V7B3N5C9D1F0G',
    type: 'decision',
    recorded_at: '2025-06-02T12:00:00.123Z',
    content: content('{"symbol":"AAPL","action":"BUY","quantity":150,"thesis":"Breakout above the 200-day average.","occurred_at":"2025-06-02T11:59:58Z"}'),
  },
  {
    id: 'dec_01JX0Z6Q4M8T2V7B3N5C9D1F0H',
    type: 'decision',
    recorded_at: '2025-06-02T12:00:00.123Z',
    nonce: 'n_0c1d2e3f4a5b6c7d',
    content: content('{"symbol":"MSFT","action":"REDUCE","target_allocation_pct":"7.5","confidence":0.65,"metadata":{"signal":{"z":-1.25e0}}}', 'n_0c1d2e3f4a5b6c7d'),
  },
  { id: 'exe_01JX0ZP2A7D3F5H8K1M4Q6S9V2', type: 'execution', recorded_at: '2025-06-02T12:05:31.007Z', content: executionContent },
];

type ChainVectorRecord = ChainRecord & { content_canonical: string; chain_entry_canonical: string };
const chainRecords: ChainVectorRecord[] = [];
let prev = '0'.repeat(64);
drafts.forEach((d, i) => {
  const contentCanonical = canonicalJson(d.content);
  const ch = contentHash(d.content);
  const signature: SignatureEnvelope | null =
    d.nonce !== undefined ? { key_id: KEY_ID, nonce: d.nonce, signature: sign(contentCanonical) } : null;
  const input: ChainEntryInput = {
    agent: AGENT, seq: i + 1, id: d.id, type: d.type, recordedAt: d.recorded_at, contentHash: ch, prevHash: prev, signature,
  };
  const hash = chainHash(input);
  const rec: ChainVectorRecord = {
    seq: i + 1,
    id: d.id,
    type: d.type,
    recorded_at: d.recorded_at,
    content: d.content,
    content_canonical: contentCanonical,
    content_hash: ch,
    prev_hash: prev,
    chain_entry_canonical: canonicalJson(chainEntry(input)),
    chain_hash: hash,
  };
  if (signature) rec.signature = signature;
  chainRecords.push(rec);
  prev = hash;
});

const chains = {
  description:
    'canon_v1 sections 3-5. One agent\'s chain of three records; record 2 is agent-signed with keypair.json (registered as key_id, not revoked). content_canonical is canon_v1(content), content_hash its sha256; chain_entry_canonical is canon_v1(chain entry), chain_hash its sha256. The execution content members are illustrative.',
  agent: AGENT,
  keys: [{ id: KEY_ID, public_key: keypair.public_key_b64url, revoked_at: null }],
  records: chainRecords,
};

// ---------------------------------------------------------------------------------------------

const files: { [name: string]: unknown } = {
  'keypair.json': keypair,
  'decimals.json': decimals,
  'canonical.json': canonical,
  'decisions.json': decisions,
  'chains.json': chains,
};

mkdirSync(OUT, { recursive: true });
const existing = Object.keys(files).filter((f) => existsSync(join(OUT, f)));
if (existing.length > 0 && !force) {
  console.error(`refusing to overwrite released vectors (${existing.join(', ')}); pass --force if you really mean it`);
  process.exit(1);
}
for (const [name, value] of Object.entries(files)) {
  writeFileSync(join(OUT, name), JSON.stringify(value, null, 2) + '\n');
  console.log(`wrote ${join(OUT, name)}`);
}
