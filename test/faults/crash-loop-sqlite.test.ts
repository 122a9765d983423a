// kill -9 under load, 20 times (LEDGER_TEST_LONG=1: 200), on a SQLite file: every acknowledged
// write survives and every chain and the global log verify (support/crash-loop.ts).
import { after, test } from 'node:test';
import { CRASH_CYCLES, crashLoop } from '../support/crash-loop.ts';
import { sqliteKind } from '../support/stores.ts';

const kind = sqliteKind();
after(() => kind.cleanup());

test(`SQLite: kill -9 under load, ${CRASH_CYCLES} times; every acknowledged write survives, every chain and the global log verify`, (t) => crashLoop(kind, t));
