import assert from 'node:assert/strict';
import { test } from 'node:test';
import { lineBlocks, readLines, splitFirstLine } from '../../src/verify/sources.ts';

async function* pieces(text: string, size: number): AsyncGenerator<Uint8Array> {
  const bytes = Buffer.from(text, 'utf8');
  for (let i = 0; i < bytes.length; i += size) yield bytes.subarray(i, i + size);
}

const decode = (b: Uint8Array) => Buffer.from(b).toString('utf8');

test('the first line and whole-line blocks survive any chunking, multi-byte characters included', async () => {
  const lines = ['{"object":"export"}', 'é1 ✓', 'two', '', 'four 🙂', 'five'];
  const text = lines.join('\r\n') + '\n';
  for (const size of [1, 2, 3, 5, 7, 64, 1 << 20]) {
    const { first, rest } = await splitFirstLine(pieces(text, size));
    assert.equal(first, lines[0]);
    const blocks = [];
    for await (const b of lineBlocks(rest, 2, 2)) blocks.push(b);
    assert.deepEqual(blocks.map((b) => b.firstLine), [2, 4, 6], `size ${size}`);
    assert.deepEqual(blocks.map((b) => decode(b.bytes)), ['é1 ✓\r\ntwo\r\n', '\r\nfour 🙂\r\n', 'five\n'], `size ${size}`);
  }
});

test('a last line without a newline is still a line; an empty stream has no first line', async () => {
  const { rest } = await splitFirstLine(pieces('h\na\nb', 1));
  const blocks = [];
  for await (const b of lineBlocks(rest, 5, 2)) blocks.push(b);
  assert.equal(blocks.length, 1);
  assert.equal(decode(blocks[0]!.bytes), 'a\nb');
  assert.equal(blocks[0]!.lines, 2);
  assert.equal((await splitFirstLine(pieces('', 4))).first, null);
});

test('readLines numbers lines and decodes across chunk boundaries', async () => {
  const out = [];
  for await (const l of readLines(pieces('α\r\nβγ\n\nδ', 1))) out.push(l);
  assert.deepEqual(out, [{ text: 'α', line: 1 }, { text: 'βγ', line: 2 }, { text: '', line: 3 }, { text: 'δ', line: 4 }]);
});
