// src/core/note.ts and src/core/tlog-proof.ts: C2SP signed-note and checkpoint examples, the
// constructed Ed25519 checkpoint / cosigned checkpoint / tlog-proof of the reference note, strict
// parsing of every part, and properties (sign -> open, any mutated byte refused). Ed25519 is
// node:crypto, injected.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  b64Decode,
  b64Encode,
  checkpointBodyDigest,
  encodeCheckpointBody,
  encodeTlogProof,
  encodeVkey,
  inclusionProof,
  isKeyName,
  leafHash,
  MemoryTree,
  noteKeyId,
  openCheckpoint,
  parseCheckpointBody,
  parseNote,
  parseTlogProof,
  parseVkey,
  signCheckpoint,
  signNote,
  utf8,
  verifyNote,
  verifyTlogProof,
  type Ed25519Sign,
  type LogResult,
} from '../../src/core/index.ts';
import { createHash } from 'node:crypto';
import { ed25519FromSeed, fromHex, loadMerkleVectors, nodeEd25519Verify, toHex } from './log-helpers.ts';

type C2sp = {
  signed_note_example: { vkey: string; note: string; text: string; key_id_hex: string };
  signed_note_poem: { note: string; text: string; signature_names: string[] };
  checkpoint_example: { note: string; origin: string; size: number; root_b64: string };
};
type Constructed = {
  checkpoint: { seed_hex: string; public_key_hex: string; vkey: string; origin: string; size: number; root_hex: string; body: string; note: string };
  cosigned_checkpoint: { witness_vkey: string; note: string };
  tlog_proof: { leaf_index: number; leaf_hash: string; text: string };
};

const c2sp = loadMerkleVectors<C2sp>('c2sp-notes.json');
const constructed = loadMerkleVectors<Constructed>('constructed.json');
const EM = '\u2014';

function value<T>(r: LogResult<T>): T {
  assert.ok(r.ok, r.ok ? '' : r.error);
  return r.value;
}

const logKey = ed25519FromSeed(fromHex(constructed.checkpoint.seed_hex));
const logVkey = value(parseVkey(constructed.checkpoint.vkey));

describe('C2SP signed-note examples', () => {
  it('the example vkey verifies the example note', () => {
    const vkey = value(parseVkey(c2sp.signed_note_example.vkey));
    assert.equal(vkey.name, 'example.com/foo');
    assert.equal(toHex(vkey.keyId), c2sp.signed_note_example.key_id_hex);
    assert.equal(toHex(noteKeyId(vkey.name, vkey.publicKey)), c2sp.signed_note_example.key_id_hex);
    assert.equal(value(encodeVkey(vkey.name, vkey.publicKey)), c2sp.signed_note_example.vkey);
    const note = value(verifyNote(c2sp.signed_note_example.note, vkey, nodeEd25519Verify));
    assert.equal(note.text, c2sp.signed_note_example.text);
    assert.ok(verifyNote(utf8(c2sp.signed_note_example.note), vkey, nodeEd25519Verify).ok, 'as bytes too');
  });

  it('the text ends at the last blank line (the poem)', () => {
    const note = value(parseNote(c2sp.signed_note_poem.note));
    assert.equal(note.text, c2sp.signed_note_poem.text);
    assert.deepEqual(note.signatures.map((s) => s.name), c2sp.signed_note_poem.signature_names);
    const other = value(parseVkey(c2sp.signed_note_example.vkey));
    assert.equal(verifyNote(c2sp.signed_note_poem.note, other, nodeEd25519Verify).ok, false, 'not signed by that key');
  });

  it('the tlog-checkpoint example parses', () => {
    const v = c2sp.checkpoint_example;
    const cp = value(parseCheckpointBody(value(parseNote(v.note)).text));
    assert.deepEqual(cp, { origin: v.origin, size: v.size, root: b64Decode(v.root_b64) });
  });
});

describe('constructed checkpoint (reference note a.7, a.9)', () => {
  const v = constructed.checkpoint;

  it('derives the vkey from the seed', () => {
    assert.equal(toHex(logKey.publicKey), v.public_key_hex);
    assert.equal(value(encodeVkey(v.origin, logKey.publicKey)), v.vkey);
  });

  it('encodes the body and signs it to exactly the published note', () => {
    const cp = { origin: v.origin, size: v.size, root: fromHex(v.root_hex) };
    assert.equal(value(encodeCheckpointBody(cp)), v.body);
    assert.equal(value(signCheckpoint(cp, logKey.publicKey, logKey.sign)), v.note);
  });

  it('opens under the log vkey', () => {
    const { checkpoint, note } = value(openCheckpoint(v.note, logVkey, nodeEd25519Verify));
    assert.deepEqual(checkpoint, { origin: v.origin, size: v.size, root: fromHex(v.root_hex) });
    assert.equal(note.text, v.body);
  });

  it('a witness cosignature (type 0x04) is ignored by the log vkey and refused as an Ed25519 vkey', () => {
    const { checkpoint, note } = value(openCheckpoint(constructed.cosigned_checkpoint.note, logVkey, nodeEd25519Verify));
    assert.equal(checkpoint.size, v.size);
    assert.equal(note.signatures.length, 2);
    assert.equal(note.signatures[1]!.signature.length, 72);
    assert.equal(parseVkey(constructed.cosigned_checkpoint.witness_vkey).ok, false);
  });

  it('a checkpoint under another origin than the key name does not open', () => {
    const other = ed25519FromSeed(new Uint8Array(32).fill(9));
    const body = value(encodeCheckpointBody({ origin: 'other.example/log', size: 1, root: new Uint8Array(32) }));
    const note = value(signNote(body, { name: v.origin, publicKey: other.publicKey }, other.sign));
    const vkey = value(parseVkey(value(encodeVkey(v.origin, other.publicKey))));
    assert.ok(verifyNote(note, vkey, nodeEd25519Verify).ok);
    assert.equal(openCheckpoint(note, vkey, nodeEd25519Verify).ok, false);
  });
});

describe('strict parsing', () => {
  const v = constructed.checkpoint;
  const [body, sigLine] = [v.body, v.note.slice(v.body.length + 1)];
  const sig = sigLine.slice(`${EM} ${v.origin} `.length, -1);

  it('checkpoint bodies', () => {
    const root = 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=';
    assert.ok(parseCheckpointBody(`o.example/log\n0\n${root}\n`).ok);
    for (const bad of [
      `ledger.example/log\n8\n${root}`, // no final newline
      `ledger.example/log\n8\n${root}\n\n`,
      `ledger.example/log\n8\n${root}\nextension\n`,
      `ledger.example/log\n8\n`,
      `\n8\n${root}\n`,
      `ledger example/log\n8\n${root}\n`,
      `ledger.example+log\n8\n${root}\n`,
      `ledger.example/log\n08\n${root}\n`,
      `ledger.example/log\n+8\n${root}\n`,
      `ledger.example/log\n8 \n${root}\n`,
      `ledger.example/log\n 8\n${root}\n`,
      `ledger.example/log\n8.0\n${root}\n`,
      `ledger.example/log\n1e3\n${root}\n`,
      `ledger.example/log\n\n${root}\n`,
      `ledger.example/log\n9007199254740992\n${root}\n`,
      `ledger.example/log\n8\n${root.slice(0, -1)}\n`,
      `ledger.example/log\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz-Nw7_RgQyg=\n`,
      `ledger.example/log\n8\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n`, // 31 bytes
      `ledger.example/log\n8\nAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA==\n`, // 33 bytes
      `ledger.example/log\n8\nXcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyh=\n`, // non-zero trailing bits
      `ledger.example/log\r\n8\r\n${root}\r\n`,
    ]) assert.equal(parseCheckpointBody(bad).ok, false, JSON.stringify(bad));
  });

  it('signed notes', () => {
    assert.ok(parseNote(v.note).ok);
    for (const [why, bad] of [
      ['no final newline', v.note.slice(0, -1)],
      ['trailing bytes', `${v.note}x`],
      ['trailing newline', `${v.note}\n`],
      ['no blank line', `${body}${sigLine}`],
      ['no signature', `${body}\n`],
      ['hyphen for em dash', `${body}\n- ${v.origin} ${sig}\n`],
      ['en dash for em dash', `${body}\n\u2013 ${v.origin} ${sig}\n`],
      ['no space after dash', `${body}\n${EM}${v.origin} ${sig}\n`],
      ['two spaces', `${body}\n${EM} ${v.origin}  ${sig}\n`],
      ['tab separator', `${body}\n${EM} ${v.origin}\t${sig}\n`],
      ['name with plus', `${body}\n${EM} a+b ${sig}\n`],
      ['empty name', `${body}\n${EM}  ${sig}\n`],
      ['unpadded base64', `${body}\n${EM} ${v.origin} ${sig.replace(/=+$/, '')}\n`],
      ['base64url', `${body}\n${EM} ${v.origin} ${sig.replace(/\+/g, '-').replace(/\//g, '_')}\n`],
      ['signature too short', `${body}\n${EM} ${v.origin} AAAAAA==\n`],
      ['duplicate signature', `${v.note}${sigLine}`],
      ['same key twice', `${v.note}${EM} ${v.origin} ${b64Encode(new Uint8Array([...b64Decode(sig)!.slice(0, 4), ...new Uint8Array(64)]))}\n`],
      ['text line after signatures', `${v.note}more\n`],
      ['CRLF', v.note.replace(/\n/g, '\r\n')],
      ['control character', v.note.replace('ledger.example/log\n8', 'ledger.example/log\n8\u0007')],
      ['lone surrogate', v.note.replace('ledger', 'led\ud800ger')],
      ['too many signatures', `${body}\n${Array.from({ length: 65 }, (_, i) => `${EM} w${i} ${sig}\n`).join('')}`],
    ] as const) assert.equal(parseNote(bad).ok, false, why);
    assert.ok(parseNote(`${body}\n${Array.from({ length: 16 }, (_, i) => `${EM} w${i} ${sig}\n`).join('')}`).ok, 'accepts 16 signatures');
  });

  it('note bytes must be UTF-8', () => {
    const bytes = utf8(v.note);
    assert.ok(parseNote(bytes).ok);
    const bad = Uint8Array.from(bytes);
    bad[3] = 0xff;
    assert.equal(parseNote(bad).ok, false);
    assert.equal(parseNote(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes])).ok, true, 'a BOM is kept as text, not stripped');
    assert.equal(openCheckpoint(new Uint8Array([0xef, 0xbb, 0xbf, ...bytes]), logVkey, nodeEd25519Verify).ok, false, '...so the signature fails');
  });

  it('vkeys', () => {
    const [name, id, key] = v.vkey.split('+') as [string, string, string];
    for (const [why, bad] of [
      ['uppercase hex', `${name}+${id.toUpperCase()}+${key}`],
      ['short hex', `${name}+${id.slice(1)}+${key}`],
      ['wrong key id', `${name}+00000000+${key}`],
      ['other name', `other.example/log+${id}+${key}`],
      ['type 0x02', `${name}+${id}+${b64Encode(new Uint8Array([2, ...b64Decode(key)!.slice(1)]))}`],
      ['31-byte key', `${name}+${id}+${b64Encode(b64Decode(key)!.slice(0, 32))}`],
      ['33-byte key', `${name}+${id}+${b64Encode(new Uint8Array([...b64Decode(key)!, 0]))}`],
      ['truncated key', `${name}+${id}+${key.slice(0, -1)}`],
      ['base64url key', `${name}+${id}+${key.replace(/\//g, '_')}`],
      ['extra part', `${v.vkey}+x`],
      ['missing part', `${name}+${id}`],
      ['trailing newline', `${v.vkey}\n`],
      ['space in name', `ledger example/log+${id}+${key}`],
    ] as const) assert.equal(parseVkey(bad).ok, false, why);
  });

  it('vkeys whose base64 holds + round-trip (names and IDs never hold +)', () => {
    let withPlus = 0;
    for (let i = 0; i < 40; i++) {
      const { publicKey } = ed25519FromSeed(new Uint8Array(32).fill(i));
      const text = value(encodeVkey('log.example/x', publicKey));
      if (text.split('+').length > 3) withPlus++;
      assert.deepEqual(value(parseVkey(text)).publicKey, publicKey);
    }
    assert.ok(withPlus > 0);
  });

  it('key names', () => {
    for (const good of ['a', 'example.com/log', 'ledger.example/log', 'ex\u00e4mple.com']) assert.ok(isKeyName(good), good);
    for (const bad of ['', 'a b', 'a+b', 'a\tb', 'a\u00a0b', 'a\u2003b', 'a\u3000b', 'a\nb', 'a\u0001b', 'a\u2028b']) assert.equal(isKeyName(bad), false, JSON.stringify(bad));
  });

  it('signing refuses bad text, names and signers', () => {
    const key = { name: v.origin, publicKey: logKey.publicKey };
    assert.equal(signNote('no newline', key, logKey.sign).ok, false);
    assert.equal(signNote('', key, logKey.sign).ok, false);
    assert.equal(signNote('a\u0000\n', key, logKey.sign).ok, false);
    assert.equal(signNote('a\n', { ...key, name: 'a b' }, logKey.sign).ok, false);
    assert.equal(signNote('a\n', { ...key, publicKey: new Uint8Array(31) }, logKey.sign).ok, false);
    const shortSigner: Ed25519Sign = () => new Uint8Array(63);
    assert.equal(signNote('a\n', key, shortSigner).ok, false);
    assert.equal(encodeCheckpointBody({ origin: v.origin, size: -1, root: new Uint8Array(32) }).ok, false);
    assert.equal(encodeCheckpointBody({ origin: v.origin, size: 1, root: new Uint8Array(31) }).ok, false);
    assert.equal(encodeCheckpointBody({ origin: 'a+b', size: 1, root: new Uint8Array(32) }).ok, false);
  });

  it('a signature that fails under the known key rejects the note, even beside a good one', () => {
    const forged = b64Encode(new Uint8Array([...logVkey.keyId, ...new Uint8Array(64)]));
    assert.equal(verifyNote(`${body}\n${EM} ${v.origin} ${forged}\n`, logVkey, nodeEd25519Verify).ok, false);
    const tampered = v.note.replace('\n8\n', '\n9\n');
    assert.equal(openCheckpoint(tampered, logVkey, nodeEd25519Verify).ok, false);
  });
});

describe('tlog-proof (reference note a.10)', () => {
  const v = constructed.tlog_proof;

  it('parses, re-encodes byte for byte, and verifies for the leaf', () => {
    const proof = value(parseTlogProof(v.text));
    assert.equal(proof.index, v.leaf_index);
    assert.equal(proof.hashes.length, 3);
    assert.equal(proof.checkpoint, constructed.checkpoint.note);
    assert.equal(proof.extra, undefined);
    assert.equal(value(encodeTlogProof(proof)), v.text);
    const ok = value(verifyTlogProof(v.text, fromHex(v.leaf_hash), logVkey, nodeEd25519Verify));
    assert.equal(ok.index, 2);
    assert.equal(ok.checkpoint.size, 8);
  });

  it('does not verify for another leaf or under another key', () => {
    assert.equal(verifyTlogProof(v.text, leafHash(utf8('other')), logVkey, nodeEd25519Verify).ok, false);
    const other = value(parseVkey(c2sp.signed_note_example.vkey));
    assert.equal(verifyTlogProof(v.text, fromHex(v.leaf_hash), other, nodeEd25519Verify).ok, false);
  });

  it('carries extra data', () => {
    const extra = utf8('record 01J...');
    const text = value(encodeTlogProof({ ...value(parseTlogProof(v.text)), extra }));
    assert.ok(text.startsWith('c2sp.org/tlog-proof@v1\nextra cmVjb3JkIDAxSi4uLg==\nindex 2\n'));
    assert.deepEqual(value(parseTlogProof(text)).extra, extra);
    assert.ok(verifyTlogProof(text, fromHex(v.leaf_hash), logVkey, nodeEd25519Verify).ok);
  });

  it('rejects malformed proofs', () => {
    const [head, rest] = [v.text.slice(0, v.text.indexOf('\n\n')), v.text.slice(v.text.indexOf('\n\n'))];
    for (const [why, bad] of [
      ['other header', v.text.replace('tlog-proof@v1', 'tlog-proof@v2')],
      ['no header', v.text.slice(v.text.indexOf('\n') + 1)],
      ['leading zero index', v.text.replace('index 2', 'index 02')],
      ['no index', v.text.replace('index 2\n', '')],
      ['index twice', v.text.replace('index 2\n', 'index 2\nindex 2\n')],
      ['index past the tree', v.text.replace('index 2', 'index 8')],
      ['extra after index', v.text.replace('index 2\n', 'index 2\nextra AA==\n')],
      ['bad extra', v.text.replace('index 2\n', 'extra A\nindex 2\n')],
      ['short hash', v.text.replace('B1Bqhf2d0vEg62lPhgEeW7RmLlxBWmKRcDPUqWJEh+c=', 'B1Bqhf2d0vEg62lPhgEeW7RmLlxBWmKRcDPUqWJE')],
      ['space in hash line', v.text.replace('B1Bqhf', ' B1Bqhf')],
      ['no blank line', `${head}\n${rest.slice(2)}`],
      ['checkpoint with extension line', v.text.replace('XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\n', 'XcnaeacGWamtVZy3Ad7ZoqudgjqtL0lgz+Nw7/RgQyg=\next\n')],
      ['checkpoint without signature', `${head}\n\n${constructed.checkpoint.body}`],
      ['trailing bytes', `${v.text}\n`],
    ] as const) assert.equal(parseTlogProof(bad).ok, false, why);
  });
});

// ---- properties ----

const originChar = fc.constantFrom(...'abcxyz019./-_:\u00e9\u4e16');
const origin = fc.array(originChar, { minLength: 1, maxLength: 30 }).map((cs) => cs.join(''));
const checkpoint = fc.record({
  origin,
  size: fc.oneof(fc.nat(1000), fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER })),
  root: fc.uint8Array({ minLength: 32, maxLength: 32 }),
});

describe('properties', () => {
  it('sign -> open gives the checkpoint back; every single-byte change is refused', () => {
    fc.assert(
      fc.property(checkpoint, fc.uint8Array({ minLength: 32, maxLength: 32 }), fc.nat(), fc.integer({ min: 1, max: 255 }), (cp, seed, at, delta) => {
        const key = ed25519FromSeed(seed);
        const vkey = value(parseVkey(value(encodeVkey(cp.origin, key.publicKey))));
        const note = value(signCheckpoint(cp, key.publicKey, key.sign));
        assert.deepEqual(value(openCheckpoint(note, vkey, nodeEd25519Verify)).checkpoint, { ...cp });
        const bytes = utf8(note);
        const mutated = Uint8Array.from(bytes);
        const i = at % bytes.length;
        mutated[i] = (mutated[i]! + delta) & 0xff;
        assert.equal(openCheckpoint(mutated, vkey, nodeEd25519Verify).ok, false, `byte ${i}`);
        assert.equal(openCheckpoint(bytes.slice(0, i), vkey, nodeEd25519Verify).ok, false, `cut at ${i}`);
      }),
      { numRuns: 300 },
    );
  });

  it('checkpoint bodies round-trip, and a mutated body either fails or re-encodes to itself', () => {
    fc.assert(
      fc.property(checkpoint, fc.nat(), fc.constantFrom(...'0123456789aA+/=\n x'), (cp, at, ch) => {
        const body = value(encodeCheckpointBody(cp));
        assert.deepEqual(value(parseCheckpointBody(body)), { ...cp });
        const i = at % body.length;
        const mutated = body.slice(0, i) + ch + body.slice(i + 1);
        const parsed = parseCheckpointBody(mutated);
        if (parsed.ok) assert.equal(value(encodeCheckpointBody(parsed.value)), mutated);
      }),
      { numRuns: 1000 },
    );
  });

  it('tlog-proofs for every leaf verify; any single-byte change is refused', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 300 }), fc.nat(), fc.nat(), fc.integer({ min: 1, max: 255 }), (size, pick, at, delta) => {
        const tree = new MemoryTree();
        const leaves = Array.from({ length: size }, (_, i) => utf8(`leaf ${i}`));
        assert.ok(tree.appendData(leaves).ok);
        const cp = { origin: constructed.checkpoint.origin, size, root: value(tree.root()) };
        const note = value(signCheckpoint(cp, logKey.publicKey, logKey.sign));
        const index = pick % size;
        const text = value(encodeTlogProof({ index, hashes: value(inclusionProof(index, size, tree.read)), checkpoint: note }));
        const leaf = leafHash(leaves[index]!);
        assert.ok(verifyTlogProof(text, leaf, logVkey, nodeEd25519Verify).ok);
        const bytes = utf8(text);
        const i = at % bytes.length;
        bytes[i] = (bytes[i]! + delta) & 0xff;
        let mutated: string;
        try {
          mutated = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
        } catch {
          return; // not text any more: nothing to hand the parser
        }
        assert.equal(verifyTlogProof(mutated, leaf, logVkey, nodeEd25519Verify).ok, false, `byte ${i}`);
      }),
      { numRuns: 150 },
    );
  });
});

describe('the checkpoint body digest an anchor timestamps (log_v1 §5)', () => {
  it('is SHA-256 of the three body lines, without the blank line and the signatures', () => {
    const { note, body, size } = constructed.checkpoint;
    const found = checkpointBodyDigest(note);
    assert.ok(found);
    assert.equal(found.body, body);
    assert.equal(found.treeSize, size);
    assert.equal(found.root, body.split('\n')[2]);
    assert.equal(toHex(found.digest), createHash('sha256').update(body, 'utf8').digest('hex'));
  });

  it('is null for a text that is no signed checkpoint', () => {
    const { note } = constructed.checkpoint;
    assert.equal(checkpointBodyDigest(note.replace('\n\n', '\n')), null);
    assert.equal(checkpointBodyDigest(`extra\n${note}`), null);
    assert.equal(checkpointBodyDigest(note.replace(/\n[0-9]+\n/, '\nten\n')), null);
  });
});
