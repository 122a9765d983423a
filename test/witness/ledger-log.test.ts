// A real ledger log witnessed: `ledger serve` (the compiled build, SQLite) records decisions; its
// checkpoints (GET /v1/log/checkpoint) and consistency proofs (GET /v1/log/proof/consistency) are
// sent to a witness started by `startWitness` (what `ledger witness` runs) with the log's vkey from
// /v1/transparency in its log list, and each one is cosigned; the cosigned notes verify under both
// the log vkey and the witness vkey. Then a split view: the log's own key signs a second history
// (one record rewritten), and the witness refuses it with 422.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { b64Encode, openCheckpoint, parseCheckpointBody, parseCosignerVkey, parseEntryBundle, parseNote, parseVkey, verifyCosignature } from '../../src/core/index.ts';
import { parseLogKey } from '../../src/log/key.ts';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { Operators } from '../../src/ledger/operators.ts';
import { openStore } from '../../src/store/open.ts';
import { startWitness } from '../../src/witness/http.ts';
import { LedgerNode } from '../support/ledger-node.ts';
import { postDecision, uniqueKey, type LoadAgent } from '../support/load.ts';
import { freePort } from '../support/ports.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { body, checkpointOf, history, logList, proofOf, value } from './helpers.ts';

async function agentIn(databaseUrl: string): Promise<LoadAgent> {
  const store = openStore(databaseUrl);
  await store.migrate();
  try {
    const created = await new Operators(store, systemClock).createAgent({ handle: `witnessed-${process.pid}` });
    assert.ok(created.ok);
    return { agentId: created.value.agent.id, handle: created.value.agent.handle, secret: created.value.apiKey.secret };
  } finally {
    await store.close();
  }
}

/** The log's checkpoint once its tree has more than `above` leaves. */
async function checkpointAbove(url: string, above: number): Promise<{ note: string; size: number }> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await fetch(`${url}/v1/log/checkpoint`);
    if (res.status === 200) {
      const note = await res.text();
      const size = Number(note.split('\n')[1]);
      if (size > above) return { note, size };
    }
    if (Date.now() > deadline) throw new Error(`the log did not grow past ${above}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe('a real ledger log (ledger serve, SQLite) witnessed', () => {
  it('every checkpoint, sent with the log\'s own consistency proof, is cosigned', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ledger-witnessed-'));
    const databaseUrl = `sqlite:${join(dir, 'ledger.db')}`;
    const agent = await agentIn(databaseUrl);
    const node = new LedgerNode('log', await freePort(), { LEDGER_DATABASE_URL: databaseUrl }, dir);
    await node.start({}, 60_000);
    let witness: Awaited<ReturnType<typeof startWitness>> | null = null;
    try {
      const target = { name: node.name, url: node.url };
      const record = async (n: number) => {
        for (let i = 0; i < n; i++) assert.equal((await postDecision(target, agent, uniqueKey('w'))).status, 201);
      };
      await record(2);
      const transparency = await (await fetch(`${node.url}/v1/transparency`)).json() as { log: { vkey: string } };
      const logVkey = value(parseVkey(transparency.log.vkey));
      const logsFile = join(dir, 'logs.txt');
      writeFileSync(logsFile, `# the ledger under test\n${logList(transparency.log.vkey)}origin none\nqpd 8640\ncontact test\n`);
      const w = await startWitness({ logsFile, dataDir: join(dir, 'witness'), port: 0, host: '127.0.0.1', name: 'witness.test/w1', prefix: '/w' });
      witness = w;
      assert.match(w.url, /\/w$/);
      const cosigner = value(parseCosignerVkey(w.key.vkey));

      let old = 0;
      let lastRoot: Uint8Array = new Uint8Array(0);
      for (let round = 0; round < 4; round++) {
        if (round > 0) await record(3);
        const cp = await checkpointAbove(node.url, old);
        let proof: string[] = [];
        if (old > 0) {
          const proofRes: Response = await fetch(`${node.url}/v1/log/proof/consistency?from=${old}&to=${cp.size}`);
          assert.equal(proofRes.status, 200);
          proof = ((await proofRes.json()) as { hashes: string[] }).hashes;
        }
        const res = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: body(old, proof, cp.note) });
        const line = await res.text();
        assert.equal(res.status, 200, line);
        const cosigned = cp.note + line;
        assert.ok(verifyCosignature(cosigned, cosigner, verifyRaw).ok);
        assert.ok(openCheckpoint(cosigned, logVkey, verifyRaw).ok);
        old = cp.size;
        lastRoot = value(parseCheckpointBody(value(parseNote(cp.note)).text)).root;
      }
      const origin = logVkey.name;

      // A split view: the ledger's own key (its key file) signs a second history of the same log,
      // built from the log's entries with one record rewritten. The witness cosigns none of it.
      const bundle = await fetch(`${node.url}/v1/log/tile/entries/000.p/${old}`);
      assert.equal(bundle.status, 200);
      const entries = value(parseEntryBundle(new Uint8Array(await bundle.arrayBuffer()), old));
      // The entries rebuild the log's own tree: the fork below differs from it in one record only.
      assert.equal(b64Encode(value(history(entries).root(old))), b64Encode(lastRoot));
      const forked = history([entries[0]!, new TextEncoder().encode('a rewritten record'), ...entries.slice(2), new TextEncoder().encode('one more')]);
      const logKey = parseLogKey(readFileSync(join(dir, 'log-key.pem'), 'utf8'), origin);
      assert.ok(logKey.ok);
      const signer = { publicKey: logKey.value.publicKey, sign: logKey.value.sign };
      const sameSize = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: body(old, [], checkpointOf(forked, old, signer, origin)) });
      assert.equal(sameSize.status, 422, await sameSize.text());
      const longer = await fetch(`${w.url}/add-checkpoint`, { method: 'POST', body: body(old, proofOf(forked, old, old + 1), checkpointOf(forked, old + 1, signer, origin)) });
      assert.equal(longer.status, 422, await longer.text());
      const served = await fetch(`${w.url}/${sha256Hex(origin)}/checkpoint`);
      assert.equal(served.status, 200);
      assert.equal(Number((await served.text()).split('\n')[1]), old);
    } finally {
      await witness?.stop();
      await node.terminate();
    }
  });
});
