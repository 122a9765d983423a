#!/usr/bin/env node
// Verifies an agent's public track record from what the service publishes, with no API key:
// its whole chain (streamed from the export), or one record's proof bundle. Prints each check
// and exits 0 only when every one passes.
//
//   npm run build    # once, in a checkout
//   LEDGER_BASE_URL=http://localhost:8080/v1 node examples/verify-agent.mjs <handle> [record_id]
import { LedgerClient } from 'decision-ledger/client';

const [handle, recordId] = process.argv.slice(2);
if (!handle) {
  console.error('usage: node examples/verify-agent.mjs <handle> [record_id]');
  process.exit(2);
}
const client = new LedgerClient({ baseUrl: process.env.LEDGER_BASE_URL ?? 'http://localhost:8080/v1' });

const results = [['chain', await client.verifyAgent(handle)]];
if (recordId) results.push([`proof of ${recordId}`, await client.verifyRecord(recordId)]);
for (const [what, v] of results) {
  console.log(`${what}: ${v.title.join('; ')}`);
  for (const c of v.checks) {
    console.log(`  ${c.ok === null ? 'note' : c.ok ? 'ok  ' : 'FAIL'} ${c.name.padEnd(18)} ${c.summary}`);
    for (const f of c.failures) console.log(`         ${f.where}: ${f.detail}`);
  }
  console.log(`${what}: ${v.ok ? 'PASS' : 'FAIL'} (${v.records} records)`);
}
process.exit(results.every(([, v]) => v.ok) ? 0 : 1);
