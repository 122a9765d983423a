// Where a webhook may go. Receivers on private, loopback, link-local and other non-public
// addresses are refused (the service must not become a way into its own network), unless the
// operator allows them (LEDGER_WEBHOOKS_ALLOW_PRIVATE=true). Names are checked AFTER resolution,
// every address they resolve to, and the request then connects to the very address that was
// checked (a pinned lookup), so a name that resolves to a public address for the check and to a
// private one for the connection (DNS rebinding) gets nowhere.
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import { isIP } from 'node:net';

/** Ranges that are not the public internet, with the reason given when refused. */
const V4_RANGES: [string, number, string][] = [
  ['0.0.0.0', 8, 'this-network'], ['10.0.0.0', 8, 'private'], ['100.64.0.0', 10, 'shared (CGNAT)'], ['127.0.0.0', 8, 'loopback'],
  ['169.254.0.0', 16, 'link-local'], ['172.16.0.0', 12, 'private'], ['192.0.0.0', 24, 'IETF protocol assignments'],
  ['192.0.2.0', 24, 'documentation'], ['192.88.99.0', 24, '6to4 relay'], ['192.168.0.0', 16, 'private'], ['198.18.0.0', 15, 'benchmarking'],
  ['198.51.100.0', 24, 'documentation'], ['203.0.113.0', 24, 'documentation'], ['224.0.0.0', 4, 'multicast'], ['240.0.0.0', 4, 'reserved'],
];

const V6_RANGES: [string, number, string][] = [
  ['::', 128, 'unspecified'], ['::1', 128, 'loopback'], ['100::', 64, 'discard'], ['2001::', 23, 'IETF protocol assignments'],
  ['2001:db8::', 32, 'documentation'], ['fc00::', 7, 'unique local (private)'], ['fe80::', 10, 'link-local'], ['fec0::', 10, 'site-local'],
  ['ff00::', 8, 'multicast'],
  // Local-use NAT64 (RFC 8215): translated by the operator's own gateway, to whatever it routes.
  ['64:ff9b:1::', 48, 'local-use NAT64'],
];

/** IPv6 prefixes that carry an IPv4 address, and where it sits: checked as that IPv4 address. */
const V6_EMBEDDING_V4: [string, number, number][] = [
  ['::ffff:0:0', 96, 12], // IPv4-mapped
  ['::ffff:0:0:0', 96, 12], // IPv4-translated (SIIT, RFC 2765): ::ffff:0:7f00:1 is 127.0.0.1
  ['::', 96, 12], // IPv4-compatible (deprecated)
  ['64:ff9b::', 96, 12], // NAT64
  ['2002::', 16, 2], // 6to4
];

function v4Bytes(ip: string): Uint8Array {
  return Uint8Array.from(ip.split('.').map(Number));
}

/** The 16 bytes of an IPv6 address (with an optional trailing dotted quad); `ip` is valid (isIP 6). */
function v6Bytes(ip: string): Uint8Array {
  let text = ip.split('%')[0]!.toLowerCase();
  const out = new Uint8Array(16);
  const quad = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  if (quad) {
    const b = v4Bytes(quad[1]!);
    text = text.slice(0, -quad[1]!.length) + `${((b[0]! << 8) | b[1]!).toString(16)}:${((b[2]! << 8) | b[3]!).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') as [string, string] : [text, null];
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((g) => parseInt(g, 16)));
  const h = groups(head);
  const t = tail === null ? [] : groups(tail);
  const all = [...h, ...new Array(8 - h.length - t.length).fill(0), ...t];
  all.forEach((g, i) => {
    out[i * 2] = g >> 8;
    out[i * 2 + 1] = g & 0xff;
  });
  return out;
}

function inPrefix(addr: Uint8Array, prefix: Uint8Array, bits: number): boolean {
  for (let i = 0; i < bits; i++) {
    const mask = 0x80 >> (i % 8);
    if ((addr[i >> 3]! & mask) !== (prefix[i >> 3]! & mask)) return false;
  }
  return true;
}

const V4 = V4_RANGES.map(([p, bits, why]) => ({ prefix: v4Bytes(p), bits, why }));
const V6 = V6_RANGES.map(([p, bits, why]) => ({ prefix: v6Bytes(p), bits, why }));
const V6_V4 = V6_EMBEDDING_V4.map(([p, bits, at]) => ({ prefix: v6Bytes(p), bits, at }));

/** Why `ip` is not a public address (e.g. "loopback"), or null when it is one. */
export function nonPublicReason(ip: string): string | null {
  const family = isIP(ip.split('%')[0]!);
  if (family === 4) return V4.find((r) => inPrefix(v4Bytes(ip), r.prefix, r.bits))?.why ?? null;
  if (family !== 6) return 'not an IP address';
  const bytes = v6Bytes(ip);
  const direct = V6.find((r) => inPrefix(bytes, r.prefix, r.bits));
  if (direct) return direct.why;
  for (const e of V6_V4) {
    if (inPrefix(bytes, e.prefix, e.bits)) return nonPublicReason([...bytes.slice(e.at, e.at + 4)].join('.'));
  }
  return null;
}

export type Resolve = (host: string) => Promise<LookupAddress[]>;

export const systemResolve: Resolve = (host) => new Promise((resolve, reject) => {
  dnsLookup(host, { all: true, verbatim: true }, (err, addresses) => (err ? reject(err) : resolve(addresses)));
});

export type AddressCheck = { ok: true; address: string; family: 4 | 6 } | { ok: false; reason: string };

const PUBLIC_ONLY = 'webhooks go to public addresses only';

/**
 * Why a host name is refused, the same words whether it does not resolve or resolves to an
 * address that is not public: naming the address (or telling the two apart) would let an agent
 * map the names of the service's own network.
 */
const notPublicName = (name: string) => `${name} is not a public host (it does not resolve, or not only to public addresses): ${PUBLIC_ONLY}`;

/** The host without URL brackets ([::1] -> ::1). */
export const bareHost = (hostname: string) => hostname.replace(/^\[(.*)\]$/, '$1');

/**
 * Resolves `host` and answers the address to connect to: the first one, when every address it
 * resolves to may be reached (all of them are checked: a name with one private address among
 * public ones is refused, as the connection could be steered to it).
 */
export async function checkHost(host: string, allowPrivate: boolean, resolve: Resolve = systemResolve): Promise<AddressCheck> {
  const bare = bareHost(host);
  const literal = isIP(bare);
  let addresses: LookupAddress[];
  if (literal) addresses = [{ address: bare, family: literal }];
  else {
    try {
      addresses = await resolve(bare);
    } catch {
      addresses = [];
    }
    if (addresses.length === 0) return { ok: false, reason: allowPrivate ? `${bare} does not resolve` : notPublicName(bare) };
  }
  if (!allowPrivate) {
    for (const a of addresses) {
      const why = nonPublicReason(a.address);
      if (why) return { ok: false, reason: literal ? `${bare} is a ${why} address: ${PUBLIC_ONLY}` : notPublicName(bare) };
    }
  }
  const first = addresses[0]!;
  return { ok: true, address: first.address, family: first.family === 6 ? 6 : 4 };
}

/** A URL a webhook may be registered with: http(s), no credentials in it, at most 2048 characters. */
export function checkUrlShape(text: string): { ok: true; url: URL } | { ok: false; reason: string } {
  if (text.length > 2048) return { ok: false, reason: 'url is longer than 2048 characters' };
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    return { ok: false, reason: 'url is not an absolute URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { ok: false, reason: 'url must use https (or http)' };
  if (url.username !== '' || url.password !== '') return { ok: false, reason: 'url must not hold credentials (user:password@)' };
  if (url.hash !== '') return { ok: false, reason: 'url must not have a fragment (#...)' };
  return { ok: true, url };
}
