// src/witness/log-list.ts (the witness network's logs/v0 list) and src/witness/key.ts (the witness
// key: created once with mode 0600, read back the same, a cosignature/v1 vkey).
import assert from 'node:assert/strict';
import { chmodSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseCosignerVkey } from '../../src/core/index.ts';
import { loadWitnessKey } from '../../src/witness/key.ts';
import { parseLogList } from '../../src/witness/log-list.ts';
import { LOG_VKEY, vectors } from './helpers.ts';

const OTHER = 'TEST+7997405c+AQcC+FTVKf0jlTdHDY3rbevmnKxxPjigCXlVtGe6RIr6';

describe('logs/v0 log list', () => {
  it('parses the format\'s example shape: comments, blank lines, origin none / other, qpd, bastion, contact', () => {
    const r = parseLogList(`#\n# List: test\n#\nlogs/v0\n\n# 1st\nvkey ${LOG_VKEY}\norigin none\nqpd 86400\nbastion none\ncontact https://x/contact\n\n# 2nd\nvkey ${OTHER}\norigin something-else\nqpd 24\n`);
    assert.ok(r.ok, r.ok ? '' : r.error);
    assert.deepEqual([...r.value.keys()], ['ledger.example/log', 'something-else']);
    assert.equal(r.value.get('ledger.example/log')!.qpd, 86400);
    assert.equal(r.value.get('something-else')!.vkeys[0]!.name, 'TEST');
  });

  it('one origin with two keys', () => {
    const r = parseLogList(`logs/v0\nvkey ${LOG_VKEY}\nvkey ${OTHER}\norigin ledger.example/log\n`);
    assert.ok(r.ok);
    assert.equal(r.value.get('ledger.example/log')!.vkeys.length, 2);
  });

  it('refuses: no header, a line before any vkey, a line twice for one log, an unknown keyword, a cosigner (0x04) or broken vkey, a bad qpd', () => {
    for (const bad of [
      `vkey ${LOG_VKEY}\n`,
      'logs/v0\norigin x\n',
      `logs/v0\nvkey ${LOG_VKEY}\nqpd 1\nqpd 2\n`,
      `logs/v0\nvkey ${LOG_VKEY}\nurl x\n`,
      `logs/v0\nvkey ${vectors.witness.vkey}\n`,
      `logs/v0\nvkey ${LOG_VKEY.slice(0, -2)}\n`,
      `logs/v0\nvkey ${LOG_VKEY}\nqpd 0\n`,
      '',
    ]) assert.equal(parseLogList(bad).ok, false, JSON.stringify(bad));
  });
});

describe('the witness key', () => {
  it('is created once with mode 0600 and read back the same; its vkey is a cosigner vkey; a loose mode is reported', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'ledger-witness-key-')), 'data');
    const first = await loadWitnessKey(dir, 'witness.test/w1');
    assert.ok(first.ok);
    assert.equal(first.value.created, true);
    assert.equal(statSync(first.value.path).mode & 0o777, 0o600);
    assert.ok(parseCosignerVkey(first.value.key.vkey).ok);
    const again = await loadWitnessKey(dir, 'witness.test/w1');
    assert.ok(again.ok);
    assert.equal(again.value.created, false);
    assert.equal(again.value.key.vkey, first.value.key.vkey);
    chmodSync(first.value.path, 0o644);
    const loose = await loadWitnessKey(dir, 'witness.test/w1');
    assert.ok(loose.ok && loose.value.looseMode);
    assert.equal((await loadWitnessKey(dir, 'has space')).ok, false);
  });
});
