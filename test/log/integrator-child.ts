// A process that runs only the global log's integrator on a shared database, for the crash and
// take-over tests (killed with SIGKILL mid-integration). Prints `holding <size>` when it takes
// the log, and `integrated <size>` after each batch it commits.
// Usage: node --import tsx test/log/integrator-child.ts <database url> <log key file>
import { Integrator } from '../../src/log/integrator.ts';
import { loadLogKey } from '../../src/log/key.ts';
import { openStore } from '../../src/store/open.ts';

const [databaseUrl, keyFile] = process.argv.slice(2) as [string, string];
const store = openStore(databaseUrl);
await store.migrate();
const key = await loadLogKey({ keyFile, dataDir: '.', origin: process.env.LOG_ORIGIN ?? 'ledger.test/log' });
if (!key.ok) throw new Error(key.error);
const integrator = new Integrator({
  log: store.log,
  key: key.value.key,
  batchSize: Number(process.env.BATCH_SIZE ?? 16),
  batchWindowMs: 10,
  pollMs: 5,
  retryMs: 100,
  onTakeOver: (size) => console.log(`holding ${size}`),
  onError: (message) => console.error(message),
});
integrator.start();
process.once('SIGTERM', () => {
  void integrator.stop().then(() => store.close()).then(() => process.exit(0));
});
