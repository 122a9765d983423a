// src/witness/sqlite-state.ts: advance is a compare-and-swap across connections (two witness
// processes on one data directory): a writer that read a state another has since replaced stores
// nothing and learns the stored state; the pragmas that make a commit durable are set.
import assert from 'node:assert/strict';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import Database from '../../src/store/sqlite/driver.ts';
import { SqliteWitnessState } from '../../src/witness/sqlite-state.ts';

const root = (b: number) => new Uint8Array(32).fill(b);
const state = (size: number, b: number) => ({ origin: 'o', size, root: root(b), note: `n${size}`, cosignedAt: 1 });

describe('witness state compare-and-swap', () => {
  it('two connections: the second writer, checking against a state already replaced, stores nothing', () => {
    const path = join(mkdtempSync(join(tmpdir(), 'ledger-witness-state-')), 'witness.db');
    const one = new SqliteWitnessState(path);
    const two = new SqliteWitnessState(path);
    try {
      assert.equal(one.latest('o'), null);
      assert.deepEqual(one.advance(null, state(4, 4)), { ok: true });
      const lost = two.advance(null, state(9, 9));
      assert.equal(lost.ok, false);
      assert.equal(lost.ok ? -1 : lost.current?.size, 4);
      // Checked against size 4 but another root: refused too.
      assert.equal(two.advance({ size: 4, root: root(5) }, state(9, 9)).ok, false);
      assert.deepEqual(two.advance({ size: 4, root: root(4) }, state(8, 8)), { ok: true });
      assert.equal(one.advance({ size: 4, root: root(4) }, state(6, 6)).ok, false, 'one read 4, two moved it to 8');
      assert.equal(one.latest('o')!.size, 8);
      assert.equal(one.latest('o')!.note, 'n8');
    } finally {
      one.close();
      two.close();
    }
    const db = new Database(path);
    try {
      assert.equal(db.pragma('journal_mode', { simple: true }), 'wal');
    } finally {
      db.close();
    }
  });
});
