// The PostgreSQL append sends its statements as scripts (src/store/postgres/append.ts), every
// value written in as a literal: each text comes back from the server exactly as it went in,
// whatever quotes, backslashes or escapes it holds, and a value that cannot be written so is refused.
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import pg from 'pg';
import { literal } from '../../src/store/postgres/append.ts';
import { POSTGRES_URL, skipUnless } from '../support/services.ts';

const skip = await skipUnless('postgres');
let client: pg.Client;

before(async () => {
  if (skip) return;
  client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
});
after(async () => {
  if (!skip) await client.end();
});

const TEXTS = [
  '', 'plain', "it's", "''", "\\'", '\\', '\\\\', "E'\\x41'", '\\x41', "'); DROP TABLE records; --", '$$', '$tag$ x $tag$',
  'line\nbreak\r\ttab', '"quoted"', 'ünïcödé ✓ 𝄞', '\u202eright-to-left', '{"blob":"x\\u0000y","q":"\\"","b":"\\\\"}', "a'b\\c'd\\",
];

test('every text comes back exactly, alone and in an array, with standard strings on or off', { skip }, async () => {
  for (const setting of ['on', 'off']) {
    await client.query(`SET standard_conforming_strings = ${setting}`);
    for (const text of TEXTS) {
      const { rows } = await client.query(`SELECT ${literal(text)} AS v, (ARRAY[${literal(text)}, NULL]::text[])[1] AS w`);
      assert.equal(rows[0].v, text, `${setting}: ${JSON.stringify(text)}`);
      assert.equal(rows[0].w, text, `${setting}: ${JSON.stringify(text)} in an array`);
    }
  }
  await client.query('RESET standard_conforming_strings');
});

test('integers and NULL are written as they are; what cannot be written is refused', () => {
  assert.equal(literal(42), '42');
  assert.equal(literal(-7), '-7');
  assert.equal(literal(null), 'NULL');
  assert.throws(() => literal('a\0b'), /NUL/);
  assert.throws(() => literal(1.5), /not an integer/);
  assert.throws(() => literal(2 ** 60), /not an integer/);
  assert.throws(() => literal(Number.NaN), /not an integer/);
});
