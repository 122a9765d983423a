// kill -9 under load, 20 times (LEDGER_TEST_LONG=1: 200), on PostgreSQL: every acknowledged write
// survives and every chain and the global log verify (support/crash-loop.ts).
import { after, test } from 'node:test';
import { CRASH_CYCLES, crashLoop } from '../support/crash-loop.ts';
import { skipUnless } from '../support/services.ts';
import { postgresKind } from '../support/stores.ts';

const skip = await skipUnless('postgres');
const kind = postgresKind();
after(() => kind.cleanup());

test(`PostgreSQL: kill -9 under load, ${CRASH_CYCLES} times; every acknowledged write survives, every chain and the global log verify`, { skip }, (t) => crashLoop(kind, t));
