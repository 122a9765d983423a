// A witness for the witnessing benchmark, run as a child process: startWitness (the code
// `ledger witness` runs) on a loopback port, from BENCH_WITNESS_LOGS / _DIR / _NAME.
import { startWitness } from '../src/witness/http.ts';
import { serveAsChild } from './child.ts';

const witness = await startWitness({
  logsFile: process.env.BENCH_WITNESS_LOGS!, dataDir: process.env.BENCH_WITNESS_DIR!, name: process.env.BENCH_WITNESS_NAME!,
  port: 0, host: '127.0.0.1', prefix: '',
});
serveAsChild(witness.url, witness.stop);
