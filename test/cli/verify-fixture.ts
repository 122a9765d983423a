// An agent's record as the public reads publish it, for the verifier's tests: unsigned and
// agent-signed decisions, an execution, a key revoked after it signed; exported to a file.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '../../src/store/open.ts';
import { testApp, type TestApp } from '../support/app.ts';
import { appendExecution, postMany, postSigned, registerSigner } from '../public/helpers.ts';

export type Fixture = {
  t: TestApp;
  dir: string;
  handle: string;
  exportPath: string;
  exportText: string;
  /** Record ids in chain order. */
  ids: string[];
  signedSeqs: number[];
  close: () => Promise<void>;
};

export async function buildFixture(databaseUrl = 'sqlite::memory:', env: Record<string, string> = {}): Promise<Fixture> {
  const store = openStore(databaseUrl);
  await store.migrate();
  const t = await testApp(store, { env: { LEDGER_READ_LIMIT_PER_MIN: '100000', LEDGER_WRITE_LIMIT_PER_MIN: '100000', ...env } });
  const agent = await t.agent();
  const ids = await postMany(t, agent.secret, 2, (i) => ({ symbol: 'AAPL', action: 'BUY', quantity: `${i + 1}.5`, thesis: 'Line one\nline "two"', metadata: { tags: ['a', 'b'], n: 3 } }));
  const signer = await registerSigner(t, agent.agentId);
  ids.push((await postSigned(t, agent, signer, { symbol: 'MSFT', action: 'SELL', quantity: '3' })).id);
  ids.push(await appendExecution(t, agent, 'MSFT'));
  ids.push((await postSigned(t, agent, signer, { symbol: 'NVDA', action: 'HOLD' })).id);
  await t.store.revokeSigningKey(agent.agentId, signer.keyId, new Date(Date.now() + 10).toISOString());
  ids.push(...await postMany(t, agent.secret, 1));
  const exportText = (await t.app.inject({ url: `/v1/export?agent=${agent.handle}` })).body;
  const dir = mkdtempSync(join(tmpdir(), 'ledger-verify-'));
  const exportPath = join(dir, 'export.ndjson');
  writeFileSync(exportPath, exportText);
  return {
    t, dir, handle: agent.handle, exportPath, exportText, ids, signedSeqs: [3, 5],
    close: async () => {
      await t.close();
      await store.close();
    },
  };
}

/** Runs the verifier, collecting what it prints. */
export async function verify(source: string, options: Parameters<typeof import('../../src/verify/run.ts').runVerify>[1] = {}) {
  const { runVerify } = await import('../../src/verify/run.ts');
  const lines: string[] = [];
  const code = await runVerify(source, { workers: 0, ...options }, (l) => lines.push(l));
  return { code, out: lines.join('\n') };
}

export function writeVariant(dir: string, name: string, text: string): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}
