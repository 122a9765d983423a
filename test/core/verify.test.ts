// verifyChain: a valid chain passes; every kind of tampering is found and named.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as ed from '@noble/ed25519';
import { verifyChain, type CanonValue, type ChainRecord, type KeyInfo } from '../../src/core/index.ts';
import { buildChain, clone, keypair, loadVectors, nodeVerifier, publicKeyB64url, rehash, signB64url, type DraftRecord } from './helpers.ts';

type ChainVector = { agent: string; keys: KeyInfo[]; records: ChainRecord[] };
const vector = loadVectors<ChainVector>('chains.json');
const AGENT = vector.agent;
const KEYS = vector.keys;
const fresh = (): ChainRecord[] => clone(vector.records).map((r) => {
  const { content_canonical: _a, chain_entry_canonical: _b, ...rest } = r as ChainRecord & { content_canonical?: string; chain_entry_canonical?: string };
  return rest;
});

function run(records: ChainRecord[], opts: { keys?: KeyInfo[]; verifier?: boolean; startSeq?: number; startPrevHash?: string; agent?: string } = {}) {
  return verifyChain({
    agent: opts.agent ?? AGENT,
    records,
    keys: opts.keys ?? KEYS,
    verifySignature: opts.verifier === false ? undefined : nodeVerifier,
    startSeq: opts.startSeq,
    startPrevHash: opts.startPrevHash,
  });
}

function failureNames(res: ReturnType<typeof run>): string[] {
  return res.failures.map((f) => `${f.name}@${f.seq}`);
}

function content(r: ChainRecord): { [k: string]: CanonValue } {
  return r.content as { [k: string]: CanonValue };
}

describe('verifyChain: valid chains', () => {
  it('the vector chain verifies, signature included', () => {
    const res = run(fresh());
    assert.equal(res.ok, true);
    assert.deepEqual(res.failures, []);
    assert.deepEqual(res.checks.map((c) => c.name), ['seq', 'prev_hash', 'recorded_at', 'content_hash', 'content_envelope', 'chain_hash', 'signature']);
    assert.ok(res.checks.every((c) => c.ok));
    assert.deepEqual(res.checks.find((c) => c.name === 'content_hash')?.counts, { checked: 3, failed: 0, skipped: 0 });
  });
  it('an empty chain is ok with no head', () => {
    assert.deepEqual(run([]).head, null);
    assert.equal(run([]).ok, true);
  });
  it('payloads omitted: hashes of contents skipped, chain still verified', () => {
    const recs = fresh().map((r) => ({ ...r, content: null }));
    const res = run(recs);
    assert.equal(res.ok, true);
    assert.deepEqual(res.checks.find((c) => c.name === 'content_hash')?.counts, { checked: 0, failed: 0, skipped: 3 });
    assert.deepEqual(res.checks.find((c) => c.name === 'chain_hash')?.counts, { checked: 3, failed: 0, skipped: 0 });
    assert.match(res.checks.find((c) => c.name === 'signature')!.detail!, /payload omitted/);
  });
  it('without a verifier, signatures are reported as not checked', () => {
    const res = run(fresh(), { verifier: false });
    assert.equal(res.ok, true);
    const sig = res.checks.find((c) => c.name === 'signature')!;
    assert.deepEqual(sig.counts, { checked: 0, failed: 0, skipped: 1 });
    assert.match(sig.detail!, /no signature verifier/);
  });
  it('a page starting mid-chain verifies from the previous hash', () => {
    const recs = fresh();
    const page = recs.slice(1);
    assert.equal(run(page, { startSeq: 2, startPrevHash: recs[0]!.chain_hash }).ok, true);
    assert.deepEqual(failureNames(run(page, { startSeq: 2 })), ['prev_hash@2']);
    assert.deepEqual(failureNames(run(page)), ['seq@2', 'prev_hash@2']);
  });
});

describe('verifyChain: tampering', () => {
  it('a content byte changed', () => {
    const recs = fresh();
    content(recs[0]!).symbol = 'AAPM';
    const res = run(recs);
    assert.equal(res.ok, false);
    assert.deepEqual(failureNames(res), ['content_hash@1']);
    const f = res.failures[0]!;
    assert.equal(f.id, recs[0]!.id);
    assert.match(f.detail!, new RegExp(`expected content_hash [0-9a-f]{64}, found ${recs[0]!.content_hash}`));
  });
  it('content and content_hash changed together', () => {
    const recs = fresh();
    content(recs[2]!).price = '1.00';
    const honest = rehash(AGENT, recs);
    recs[2]!.content_hash = honest[2]!.content_hash;
    assert.deepEqual(failureNames(run(recs)), ['chain_hash@3']);
    assert.match(run(recs).failures[0]!.detail!, /expected chain_hash [0-9a-f]{64}, found [0-9a-f]{64}/);
  });
  it('a chain_hash changed', () => {
    const recs = fresh();
    recs[0]!.chain_hash = 'f'.repeat(64);
    assert.deepEqual(failureNames(run(recs)), ['chain_hash@1', 'prev_hash@2']);
  });
  it('a prev_hash changed', () => {
    const recs = fresh();
    recs[1]!.prev_hash = '0'.repeat(64);
    assert.deepEqual(failureNames(run(recs)), ['prev_hash@2', 'chain_hash@2']);
  });
  it('a signed record rewritten with every hash recomputed is caught by the signature', () => {
    const recs = fresh();
    content(recs[1]!).target_allocation_pct = '70';
    const forged = rehash(AGENT, recs);
    // Hashes are all consistent again, so only the agent's signature gives the forgery away.
    assert.deepEqual(failureNames(run(forged)), ['signature@2']);
  });
  it('order swapped', () => {
    const recs = fresh();
    const swapped = [recs[0]!, recs[2]!, recs[1]!];
    const names = failureNames(run(swapped));
    assert.ok(names.includes('seq@3'));
    assert.ok(names.includes('seq@2'));
    assert.ok(names.includes('prev_hash@3'));
    assert.ok(names.includes('recorded_at@2'));
  });
  it('a record removed (seq gap)', () => {
    const recs = fresh();
    const res = run([recs[0]!, recs[2]!]);
    assert.deepEqual(failureNames(res), ['seq@3', 'prev_hash@3']);
    assert.match(res.failures[0]!.detail!, /expected seq 2, found 3/);
  });
  it('a seq renumbered', () => {
    const recs = fresh();
    recs[2]!.seq = 4;
    assert.deepEqual(failureNames(run(recs)), ['seq@4', 'chain_hash@4']);
  });
  it('timestamp decreased (even with every hash recomputed)', () => {
    const recs = fresh();
    recs[2]!.recorded_at = '2025-06-02T11:59:59.999Z';
    const res = run(rehash(AGENT, recs));
    assert.deepEqual(failureNames(res), ['recorded_at@3']);
    assert.match(res.failures[0]!.detail!, /before the previous record's 2025-06-02T12:00:00.123Z/);
  });
  it('timestamp in a wrong format', () => {
    for (const bad of ['2025-06-02T12:05:31Z', '2025-06-02T12:05:31.007+00:00', '2025-02-30T12:05:31.007Z', '2025-06-02 12:05:31.007Z']) {
      const recs = fresh();
      recs[2]!.recorded_at = bad;
      assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['recorded_at@3'], bad);
    }
  });
  it('a signature byte changed', () => {
    const recs = fresh();
    const sig = recs[1]!.signature!;
    sig.signature = (sig.signature[0] === 'A' ? 'B' : 'A') + sig.signature.slice(1);
    assert.deepEqual(failureNames(run(recs)), ['chain_hash@2', 'signature@2']);
    assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['signature@2']);
  });
  it('a signature that is not valid base64url', () => {
    const recs = fresh();
    recs[1]!.signature!.signature += '=';
    assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['signature@2']);
  });
  it('a signature envelope removed', () => {
    const recs = fresh();
    delete recs[1]!.signature;
    assert.deepEqual(failureNames(run(recs)), ['chain_hash@2']);
  });
  it('signature nonce differing from the content nonce', () => {
    const recs = fresh();
    recs[1]!.signature!.nonce = 'n_other';
    const res = run(rehash(AGENT, recs));
    assert.deepEqual(failureNames(res), ['signature@2']);
    assert.match(res.failures[0]!.detail!, /nonce/);
  });
  it('signed by another key than the registered one', () => {
    const other = new Uint8Array(32).fill(7);
    const recs = fresh();
    recs[1]!.signature!.signature = signB64url(JSON.stringify('x'), other);
    assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['signature@2']);
  });
  it('unknown key', () => {
    const res = run(fresh(), { keys: [] });
    assert.deepEqual(failureNames(res), ['signature@2']);
    assert.match(res.failures[0]!.detail!, /not known/);
  });
  it('key revoked before the record', () => {
    const recordedAt = vector.records[1]!.recorded_at; // 2025-06-02T12:00:00.123Z
    const revoked = (at: string) => run(fresh(), { keys: [{ ...KEYS[0]!, revoked_at: at }] });
    assert.deepEqual(failureNames(revoked('2025-06-02T12:00:00.122Z')), ['signature@2']);
    assert.match(revoked('2025-06-02T12:00:00.122Z').failures[0]!.detail!, /revoked/);
    assert.deepEqual(failureNames(revoked('2025-06-02T13:00:00.122+02:00')), ['signature@2']);
    assert.equal(revoked(recordedAt).ok, true, 'revoked at the same instant is not before');
    assert.equal(revoked('2025-06-02T12:00:00.124Z').ok, true);
    assert.equal(revoked('2030-01-01T00:00:00Z').ok, true);
    assert.deepEqual(failureNames(revoked('yesterday')), ['signature@2']);
  });
  it('content of another agent or type', () => {
    let recs = fresh();
    content(recs[0]!).agent = 'someone-else';
    let res = run(rehash(AGENT, recs));
    assert.deepEqual(failureNames(res), ['content_envelope@1']);
    assert.match(res.failures[0]!.detail!, /agent is "someone-else"/);
    recs = fresh();
    content(recs[2]!).type = 'decision';
    assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['content_envelope@3']);
    recs = fresh();
    content(recs[0]!).canon = 'canon_v2';
    assert.deepEqual(failureNames(run(rehash(AGENT, recs))), ['content_envelope@1']);
  });
  it('verified as another agent', () => {
    const names = failureNames(run(fresh(), { agent: 'impostor' }));
    assert.deepEqual(names, ['content_envelope@1', 'chain_hash@1', 'content_envelope@2', 'chain_hash@2', 'content_envelope@3', 'chain_hash@3']);
  });
  it('content that is not canon_v1 (a JSON number slipped in)', () => {
    const recs = fresh() as unknown as { content: Record<string, unknown> }[];
    recs[0]!.content.quantity = 150;
    const res = run(recs as unknown as ChainRecord[]);
    assert.deepEqual(failureNames(res), ['content_hash@1']);
    assert.match(res.failures[0]!.detail!, /cannot be serialised/);
  });
});

describe('verifyChain: large chains', () => {
  const secret = new Uint8Array(32).fill(9);
  const key: KeyInfo = { id: 'aid_big', public_key: publicKeyB64url(secret), revoked_at: null };
  const drafts: DraftRecord[] = Array.from({ length: 3000 }, (_, i) => ({
    id: `dec_${String(i).padStart(8, '0')}`,
    type: 'decision',
    recorded_at: new Date(Date.UTC(2025, 0, 1) + i * 1000).toISOString(),
    content: { canon: 'canon_v1', type: 'decision', agent: 'big', symbol: 'S', action: 'BUY', quantity: String(i), nonce: `n${i}` },
    sign: i % 100 === 0 ? { key_id: 'aid_big', nonce: `n${i}`, secret } : undefined,
  }));
  const chain = buildChain('big', drafts);

  it('verifies 3000 records with aggregated checks', () => {
    const res = verifyChain({ agent: 'big', records: chain, keys: [key], verifySignature: nodeVerifier });
    assert.equal(res.ok, true);
    assert.equal(res.checks.length, 7);
    assert.deepEqual(res.checks.find((c) => c.name === 'signature')?.counts, { checked: 30, failed: 0, skipped: 0 });
    assert.deepEqual(res.head, { seq: 3000, chain_hash: chain[2999]!.chain_hash });
  });
  it('lists at most 100 failures and counts the rest', () => {
    const tampered = chain.map((r) => ({ ...r, content_hash: 'a'.repeat(64) }));
    const res = verifyChain({ agent: 'big', records: tampered, keys: [key], verifySignature: nodeVerifier });
    assert.equal(res.ok, false);
    assert.equal(res.failures.length, 101);
    assert.deepEqual(res.failures[100], { name: 'more_failures', ok: false, detail: 'and 5900 more' });
    assert.deepEqual(res.checks.find((c) => c.name === 'content_hash')?.counts, { checked: 3000, failed: 3000, skipped: 0 });
    assert.deepEqual(res.checks.find((c) => c.name === 'chain_hash')?.counts, { checked: 3000, failed: 3000, skipped: 0 });
  });
  it('noble and node:crypto agree on the vector signature', () => {
    const r = vector.records[1] as ChainRecord & { content_canonical: string };
    const msg = new TextEncoder().encode(r.content_canonical);
    const sig = new Uint8Array(Buffer.from(r.signature!.signature, 'base64url'));
    const pub = new Uint8Array(Buffer.from(keypair.public_key_hex, 'hex'));
    assert.equal(ed.verify(sig, msg, pub), true);
    assert.equal(nodeVerifier(keypair.public_key_b64url, msg, r.signature!.signature), true);
    sig[0]! ^= 1;
    assert.equal(ed.verify(sig, msg, pub), false);
    assert.equal(nodeVerifier(keypair.public_key_b64url, msg, Buffer.from(sig).toString('base64url')), false);
  });
});
