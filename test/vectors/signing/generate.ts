// Generates the signing test vectors in test/vectors/signing/ ONCE (a vector never changes after
// release; this refuses to overwrite unless --force). Run:
//   node --import tsx test/vectors/signing/generate.ts [--force]
// Payloads come from the caller-side builder (examples/canon-payload.mjs) and are cross-checked
// here against the service's core (src/core decisionContent); signatures come from
// @noble/ed25519 with the fixed keypair of test/vectors/canon_v1/keypair.json (RFC 8032 TEST 1).
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { createHash } from 'node:crypto';
import * as ed from '@noble/ed25519';
import { sha512 } from '@noble/hashes/sha2.js';
import { decisionPayload } from '../../../examples/canon-payload.mjs';
import { canonicalJson, decisionContent, readJson, type JsonValue } from '../../../src/core/index.ts';

ed.hashes.sha512 = sha512;

const HERE = dirname(fileURLToPath(import.meta.url));
const force = process.argv.includes('--force');
const keypair = JSON.parse(readFileSync(join(HERE, '..', 'canon_v1', 'keypair.json'), 'utf8')) as { seed_hex: string; public_key_b64url: string };
const seed = Buffer.from(keypair.seed_hex, 'hex');
const b64url = (b: Uint8Array) => Buffer.from(b).toString('base64url');

const AGENT = 'vector-signer';
const NOW = '2025-06-02T12:00:00.000Z';

/** Each case: the decision fields as raw JSON text (numbers in the forms a caller may send) and a nonce. */
const CASES: { name: string; fields: string; nonce: string }[] = [
  { name: 'minimal signed decision', fields: '{"symbol":"AAPL","action":"BUY","occurred_at":"2025-06-02T11:59:00Z"}', nonce: 'nonce-0001' },
  {
    name: 'every field, decimals as numbers and strings, nested metadata',
    fields: '{"symbol":"BTC/USD","action":"INCREASE","asset_class":"CRYPTO","target_allocation_pct":12.50,"quantity":"1.5e2","notional":2.75E+4,"currency":"EUR","confidence":"0.80","time_horizon":"3-6 months","thesis":"Halving supply shock.\\nRisk: \\"regulation\\" \\\\ tail\\ttab","metadata":{"model":"m-1","scores":[0.1,"0.10",0,-0.0,1e0],"nested":{"z":1,"a":{"deep":-2.5E-3}},"flag":true,"none":null},"occurred_at":"2025-06-02T13:59:59.999+02:00"}',
    nonce: 'n_7f3c9a1e2b4d4e6f',
  },
  {
    name: 'non-ASCII text and keys sorted by UTF-16 code units',
    fields: '{"symbol":"SAP","action":"HOLD","asset_class":"ETF","thesis":"Café 😀 — naïve \\u2028 line","metadata":{"é":"e-acute","z":"z","Z":"Z","😀":"astral","\\uffff":"bmp-last"},"occurred_at":"2025-05-27T12:00:00.5-04:00"}',
    nonce: 'nonce with spaces, "quotes" and ünïcode',
  },
];

function payloadOf(c: (typeof CASES)[number]): string {
  const fields = JSON.parse(c.fields) as Record<string, unknown>;
  const fromCaller = decisionPayload({ agent: AGENT, fields, nonce: c.nonce });
  const read = readJson(c.fields);
  if (!read.ok) throw new Error(read.error.message);
  const core = decisionContent({ agent: AGENT, fields: read.value as { [k: string]: JsonValue }, nonce: c.nonce, now: new Date(NOW) });
  if (!core.ok) throw new Error(`${c.name}: ${core.error.message}`);
  if (canonicalJson(core.document) !== fromCaller) throw new Error(`${c.name}: caller-built payload differs from the core's`);
  return fromCaller;
}

const signedDecisions = {
  description:
    'Agent-signed decisions. The agent (handle `agent`) registers keypair.json\'s public key; with the service clock at `now`, ' +
    'POST /v1/decisions/assertion with `assertion_request` answers `payload` and `content_hash`; `signature` is Ed25519 over ' +
    'payload (UTF-8) with keypair.json\'s seed, base64url; POST /v1/decisions with `decision_request` (replace KEY_ID by the ' +
    'registered key id; the signature does not cover it) records content_hash with verification.agent_signed true.',
  keypair: '../canon_v1/keypair.json',
  agent: AGENT,
  now: NOW,
  vectors: CASES.map((c) => {
    const payload = payloadOf(c);
    const fields = c.fields.slice(0, -1);
    const signature = b64url(ed.sign(new TextEncoder().encode(payload), seed));
    return {
      name: c.name,
      nonce: c.nonce,
      assertion_request: `${fields},"nonce":${JSON.stringify(c.nonce)}}`,
      payload,
      content_hash: createHash('sha256').update(payload, 'utf8').digest('hex'),
      signature,
      decision_request: `${fields},"signature":{"key_id":"KEY_ID","nonce":${JSON.stringify(c.nonce)},"signature":"${signature}"}}`,
    };
  }),
};

// ---------------------------------------------------------------------------------------------
// Public keys the service must refuse (param public_key), and ones it must accept.

const P = (1n << 255n) - 19n;
const le32 = (n: bigint, signBit = false) => {
  const out = Buffer.alloc(32);
  for (let i = 0; i < 32; i++) out[i] = Number((n >> BigInt(8 * i)) & 0xffn);
  if (signBit) out[31]! |= 0x80;
  return out;
};
const SMALL_ORDER_HEX = [
  ['order 1 (identity)', '0100000000000000000000000000000000000000000000000000000000000000'],
  ['order 2', 'ecffffffffffffffffffffffffffffffffffffffffffffffffffffffffffff7f'],
  ['order 4 (y = 0)', '0000000000000000000000000000000000000000000000000000000000000000'],
  ['order 4 (y = 0, x negative)', '0000000000000000000000000000000000000000000000000000000000000080'],
  ['order 8', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac037a'],
  ['order 8', 'c7176a703d4dd84fba3c0b760d10670f2a2053fa2c39ccc64ec7fd7792ac03fa'],
  ['order 8', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc05'],
  ['order 8', '26e8958fc2b227b045c3f489f2ef98f0d5dfac05d3c63339b13802886d53fc85'],
] as const;
for (const [, hex] of SMALL_ORDER_HEX) {
  if (!ed.Point.fromHex(hex, false).isSmallOrder()) throw new Error(`${hex} is not small-order`);
}
const pkcs8 = Buffer.concat([Buffer.from('302e020100300506032b657004220420', 'hex'), seed]);
const spki = Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), Buffer.from(keypair.public_key_b64url, 'base64url')]);
const mixedOrder = ed.Point.BASE.add(ed.Point.fromHex(SMALL_ORDER_HEX[1][1])).toBytes();
const pem = `-----BEGIN PRIVATE KEY-----\n${pkcs8.toString('base64')}\n-----END PRIVATE KEY-----\n`;
const pub = keypair.public_key_b64url;

const publicKeys = {
  description:
    'POST /v1/keys public_key values. Each `rejected` value is answered 400 invalid_request with param public_key and a message ' +
    'containing `message_contains`; each `accepted` value registers. Small-order points (and non-canonical spellings of them) ' +
    'would let anyone forge signatures.',
  rejected: [
    ...SMALL_ORDER_HEX.map(([why, hex]) => ({ name: `small-order point, ${why}`, public_key: b64url(Buffer.from(hex, 'hex')), message_contains: 'small-order' })),
    { name: 'non-canonical identity (y = p + 1)', public_key: b64url(le32(P + 1n)), message_contains: 'not the canonical encoding' },
    { name: 'non-canonical y = 0 (y = p)', public_key: b64url(le32(P)), message_contains: 'not the canonical encoding' },
    { name: 'non-canonical: y = 2^255 - 1, not below p', public_key: b64url(le32((1n << 255n) - 1n)), message_contains: 'not the canonical encoding' },
    { name: 'identity with the sign bit set (x = 0 cannot be negative)', public_key: b64url(le32(1n, true)), message_contains: 'not the canonical encoding' },
    { name: 'not on the curve (y = 2)', public_key: b64url(le32(2n)), message_contains: 'not the canonical encoding' },
    { name: 'mixed order: base point plus a point of order 2', public_key: b64url(mixedOrder), message_contains: 'prime-order subgroup' },
    { name: '64 bytes: seed and public key, a private key', public_key: b64url(Buffer.concat([seed, Buffer.from(pub, 'base64url')])), message_contains: 'private key' },
    { name: '48 bytes: PKCS#8 DER private key', public_key: b64url(pkcs8), message_contains: 'private key' },
    { name: 'PEM private key', public_key: pem, message_contains: 'PEM' },
    { name: 'PEM public key', public_key: `-----BEGIN PUBLIC KEY-----\n${spki.toString('base64')}\n-----END PUBLIC KEY-----\n`, message_contains: 'PEM' },
    { name: '44 bytes: SPKI DER public key', public_key: b64url(spki), message_contains: 'SPKI' },
    { name: 'hex of the public key', public_key: Buffer.from(pub, 'base64url').toString('hex'), message_contains: 'hex' },
    { name: 'hex of a 64-byte private key', public_key: Buffer.concat([seed, Buffer.from(pub, 'base64url')]).toString('hex'), message_contains: 'private key' },
    { name: 'padded base64url', public_key: `${pub}=`, message_contains: 'base64url' },
    { name: 'standard base64 alphabet', public_key: Buffer.from(pub, 'base64url').toString('base64'), message_contains: 'base64url' },
    { name: 'non-zero trailing bits (a second spelling of the same bytes)', public_key: `${pub.slice(0, -1)}p`, message_contains: 'base64url' },
    { name: 'surrounding whitespace', public_key: ` ${pub}`, message_contains: 'base64url' },
    { name: '31 bytes', public_key: b64url(Buffer.from(pub, 'base64url').subarray(0, 31)), message_contains: 'exactly 32 bytes' },
    { name: '33 bytes', public_key: b64url(Buffer.concat([Buffer.from(pub, 'base64url'), Buffer.from([0])])), message_contains: 'exactly 32 bytes' },
  ],
  accepted: [
    { name: 'RFC 8032 TEST 1 public key (keypair.json)', public_key: pub },
    { name: 'RFC 8032 TEST 2 public key', public_key: b64url(Buffer.from('3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c', 'hex')) },
  ],
};

for (const [file, content] of [['signed-decisions.json', signedDecisions], ['public-keys.json', publicKeys]] as const) {
  const path = join(HERE, file);
  if (existsSync(path) && !force) {
    console.log(`kept ${file} (exists; --force to overwrite)`);
    continue;
  }
  writeFileSync(path, JSON.stringify(content, null, 2) + '\n');
  console.log(`wrote ${file}`);
}
