// Changing any single byte of any published record (content, hashes, order, timestamps,
// signatures) makes `ledger verify` fail and say where.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { buildFixture, verify, writeVariant, type Fixture } from './verify-fixture.ts';

describe('ledger verify finds every tampered record', () => {
  let f: Fixture;
  let header: string;
  let records: string[];
  before(async () => {
    f = await buildFixture();
    [header, ...records] = f.exportText.trimEnd().split('\n') as [string, ...string[]];
    assert.equal(records.length, 6);
    assert.equal((await verify(f.exportPath)).code, 0);
  });
  after(async () => {
    await f.close();
    rmSync(f.dir, { recursive: true, force: true });
  });

  /** The export with record `seq` (1-based) replaced by what `change` makes of its line. */
  const variant = (seq: number, change: (line: string) => string) => {
    const lines = [...records];
    const changed = change(lines[seq - 1]!);
    assert.notEqual(changed, lines[seq - 1], 'the change must change something');
    lines[seq - 1] = changed;
    return [header, ...lines].join('\n') + '\n';
  };

  /** Flips one character of the JSON string value of `field` (in `entry` or the record). */
  const flipIn = (field: string, at = 10) => (line: string) => {
    const m = new RegExp(`"${field}":"([^"]{${at + 1},})"`).exec(line);
    assert.ok(m, `${field} in ${line}`);
    const start = m.index + field.length + 4 + at;
    const c = line[start]!;
    const replacement = /[0-9]/.test(c) ? String((Number(c) + 1) % 10) : c === 'a' ? 'b' : 'a';
    return line.slice(0, start) + replacement + line.slice(start + 1);
  };

  const cases: [string, number, (line: string) => string, RegExp][] = [
    ['a byte of the content', 2, (l) => l.replace('Line one', 'Line onf'), /FAIL content_bytes[^\n]*\n\s+seq 2 dec_/],
    ['a decimal in the content', 1, (l) => l.replace('\\"quantity\\":\\"1.5\\"', '\\"quantity\\":\\"1.6\\"'), /FAIL content_hash[^\n]*\n\s+seq 1 dec_/],
    ['content_hash', 4, flipIn('content_hash'), /FAIL content_bytes[^\n]*\n\s+seq 4 exe_/],
    ['chain_hash', 2, flipIn('chain_hash', 0), /FAIL chain_hash[^\n]*\n\s+seq 2 dec_/],
    ['prev_hash', 3, flipIn('prev_hash', 5), /FAIL prev_hash[^\n]*\n\s+seq 3 dec_/],
    ['recorded_at (a later time)', 2, flipIn('recorded_at', 21), /FAIL chain_hash[^\n]*\n\s+seq 2 dec_/],
    ['recorded_at (an impossible time)', 6, (l) => l.replace(/"recorded_at":"(\d{4})-\d\d/, '"recorded_at":"$1-13'), /FAIL recorded_at[^\n]*\n\s+seq 6 dec_/],
    ['the signature', 3, flipIn('signature', 20), /FAIL signature[^\n]*\n\s+seq 3 dec_/],
    ['the signature nonce', 5, flipIn('nonce', 3), /FAIL (chain_hash|signature)[^\n]*\n\s+seq 5 dec_/],
    ['the signing key id', 5, flipIn('key_id', 8), /FAIL (chain_hash|signature)[^\n]*\n\s+seq 5 dec_/],
    ['the record id', 2, flipIn('id', 8), /FAIL chain_hash[^\n]*\n\s+seq 2 dec_/],
    ['the record type', 4, (l) => l.replace('"type":"execution"', '"type":"decision"'), /FAIL (chain_hash|content_envelope)[^\n]*\n\s+seq 4 exe_/],
    ['the seq', 2, (l) => l.replace('"seq":"2"', '"seq":"3"'), /FAIL seq[^\n]*\n\s+seq 3 dec_/],
    ['the seq spelling', 2, (l) => l.replace('"seq":"2"', '"seq":"02"'), /FAIL entry_members[^\n]*\n\s+seq 2 dec_/],
    ['the agent in the entry', 2, (l) => l.replace(/"agent":"([^"]+)","canon"/, '"agent":"$1x","canon"'), /FAIL entry_members[^\n]*\n\s+seq 2 dec_/],
    ['an extra entry member', 2, (l) => l.replace('"canon":"canon_v1"', '"canon":"canon_v1","note":"x"'), /FAIL entry_members[^\n]*\n\s+seq 2 dec_/],
    ['the signature removed', 3, (l) => l.replace(/,"signature":\{[^}]+\}/, ''), /FAIL (chain_hash|signature)[^\n]*\n\s+seq 3 dec_/],
  ];

  for (const [what, seq, change, where] of cases) {
    test(`changing ${what}`, async () => {
      const { code, out } = await verify(writeVariant(f.dir, 'tampered.ndjson', variant(seq, change)));
      assert.equal(code, 1, out);
      assert.match(out, where);
      assert.match(out, /verdict: FAIL/);
    });
  }

  test('swapping two records', async () => {
    const lines = [...records];
    [lines[1], lines[2]] = [lines[2]!, lines[1]!];
    const { code, out } = await verify(writeVariant(f.dir, 'swapped.ndjson', [header, ...lines].join('\n')));
    assert.equal(code, 1, out);
    assert.match(out, /FAIL seq /);
    assert.match(out, /\n\s+seq 3 dec_\w+ line 3: expected seq 2, found 3\n/);
  });

  test('removing a record, or the last one', async () => {
    const gap = await verify(writeVariant(f.dir, 'gap.ndjson', [header, ...records.filter((_, i) => i !== 3)].join('\n')));
    assert.equal(gap.code, 1, gap.out);
    assert.match(gap.out, /seq 5 dec_\w+ line 5: expected seq 4, found 5/);
    const cut = await verify(writeVariant(f.dir, 'cut.ndjson', [header, ...records.slice(0, 5)].join('\n')));
    assert.equal(cut.code, 1, cut.out);
    assert.match(cut.out, /FAIL head\s+the export header's head is seq 6 .* but the records end at seq 5/);
    assert.match(cut.out, /FAIL record_count/);
  });

  test('every single-byte change of every record line is caught and located', async () => {
    const path = writeVariant(f.dir, 'flip.ndjson', f.exportText);
    let flips = 0;
    for (let r = 0; r < records.length; r++) {
      const line = records[r]!;
      for (let i = 0; i < line.length; i++) {
        const flipped = String.fromCharCode(line.charCodeAt(i) ^ 1);
        const lines = [...records];
        lines[r] = line.slice(0, i) + flipped + line.slice(i + 1);
        writeVariant(f.dir, 'flip.ndjson', [header, ...lines].join('\n') + '\n');
        const { code, out } = await verify(path);
        flips++;
        assert.equal(code, 1, `flipping byte ${i} of record ${r + 1} (${JSON.stringify(line[i])} -> ${JSON.stringify(flipped)}) was not caught:\n${out}`);
        assert.ok(out.includes(`seq ${r + 1} `) || out.includes(`line ${r + 2}`), `record ${r + 1}, byte ${i}: not located\n${out}`);
      }
    }
    assert.ok(flips > 3000, `${flips} flips`);
  });
});
