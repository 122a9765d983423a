// A second process writing large records into one SQLite file (wal-bound.test.ts): argv is the
// database path, the record count, the concurrency and the checkpoint policy as JSON. Prints
// "ready" once its agent exists, waits for "go" on stdin, prints "done" when every write is a 201.
import { createInterface } from 'node:readline';
import { SqliteStore } from '../../src/store/sqlite/store.ts';
import { postDecision, testApp } from '../support/app.ts';

const [path, count, parallel, policy] = process.argv.slice(2) as [string, string, string, string];
const store = new SqliteStore(path, JSON.parse(policy));
await store.migrate();
const t = await testApp(store, { env: { LEDGER_WRITE_LIMIT_PER_MIN: '1000000' } });
const agent = await t.agent();
const quotes = '"'.repeat(60_000); // about 120 kB of content once escaped
console.log('ready');
const go = createInterface({ input: process.stdin });
await new Promise<void>((resolve) => go.once('line', () => resolve()));
go.close(); // stdin open would keep this process alive
process.stdin.destroy();
let next = 0;
const writer = async () => {
  while (next < Number(count)) {
    const i = next++;
    const res = await postDecision(t, agent.secret, { symbol: 'AAPL', action: 'BUY', metadata: { quotes, i } });
    if (res.statusCode !== 201) throw new Error(`write ${i}: ${res.statusCode} ${res.body}`);
  }
};
await Promise.all(Array.from({ length: Number(parallel) }, writer));
console.log('done');
await t.close();
await store.close();
