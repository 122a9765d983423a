// Revocation is race-free: the store's append transaction refuses a signed record whose key was
// revoked before it (outcome key_revoked), and a revoke racing signed writes, from another
// connection, never leaves a record signed after revoked_at.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { appendRecords, type AppendRequest } from '../../src/ledger/append.ts';
import { systemClock } from '../../src/domain/clock.ts';
import { sha256Hex } from '../../src/core/sha256.ts';
import { openStore } from '../../src/store/open.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { forEachStore } from '../support/stores.ts';
import { testApp } from '../support/app.ts';
import { assertion, newKeypair, postSigned, registerKey, sign, verifyStoredChain } from './helpers.ts';

function pending(agent: { agentId: string; handle: string }, content: string, signature: AppendRequest['signature'], idem: string): AppendRequest {
  return {
    agentId: agent.agentId, agentHandle: agent.handle, type: 'decision', symbol: 'AAPL', content, contentHash: sha256Hex(content),
    signature, linkToken: null, idempotency: { key: idem, fingerprint: sha256Hex(idem) },
  };
}

await forEachStore('revocation races', (kind) => {
  test('appendBatch refuses a record signed by a key revoked before the transaction, and only that record', async () => {
    const store = await kind.open();
    const t = await testApp(store);
    try {
      const agent = await t.agent();
      const created = (at: string, id: string) => store.createSigningKey({ id, agentId: agent.agentId, publicKey: newKeypair().publicKey, label: 'k', createdAt: at, revokedAt: null });
      const now = new Date().toISOString();
      const revoked = await created(now, 'aid_01JREVOKED0000000000000000');
      const live = await created(now, 'aid_01JLIVE000000000000000000000');
      await store.revokeSigningKey(agent.agentId, revoked.id, now);
      const outcomes = await appendRecords(store, [
        pending(agent, '{"n":"1"}', null, 'idem-unsigned-1'),
        pending(agent, '{"n":"2"}', { key_id: revoked.id, nonce: 'n-revoked', signature: 'sig' }, 'idem-revoked-1'),
        pending(agent, '{"n":"3"}', { key_id: 'aid_01JUNKNOWN000000000000000', nonce: 'n-unknown', signature: 'sig' }, 'idem-unknown-1'),
        pending(agent, '{"n":"4"}', { key_id: live.id, nonce: 'n-live', signature: 'sig' }, 'idem-live-1'),
      ], systemClock);
      assert.deepEqual(outcomes.map((o) => o.kind), ['recorded', 'key_revoked', 'key_revoked', 'recorded']);
      assert.equal((await store.chainHead(agent.agentId)).seq, 2);
      assert.equal(await store.isNonceUsed(agent.agentId, 'n-revoked'), false);
      assert.equal(await store.isNonceUsed(agent.agentId, 'n-live'), true);
      assert.equal(await store.findIdempotent(agent.agentId, 'idem-revoked-1'), null);
      const last = outcomes[3]!;
      assert.ok(last.kind === 'recorded' && last.record.chainSeq === 2);
    } finally {
      await t.close();
      await store.close();
      await kind.cleanup();
    }
  });

  test('a revoke from another connection racing signed writes: every record signed by the key predates revoked_at', async () => {
    const url = await kind.freshUrl();
    const writer = openStore(url);
    await writer.migrate();
    const revoker: LedgerStore = openStore(url);
    await revoker.migrate();
    const t = await testApp(writer);
    try {
      const agent = await t.agent();
      const key = newKeypair();
      const keyId = await registerKey(t, agent.secret, key.publicKey);
      const occurredAt = new Date(Date.now() - 60_000).toISOString();
      const signedRequests = [];
      for (let i = 0; i < 25; i++) {
        const fields = { symbol: 'AAPL', action: 'BUY', quantity: String(i + 1), occurred_at: occurredAt };
        const nonce = `race-${i}`;
        const { payload } = await assertion(t, agent.secret, { ...fields, nonce });
        signedRequests.push({ fields, signature: { key_id: keyId, nonce, signature: sign(payload, key) } });
      }
      const late = signedRequests.pop()!;
      const posts = signedRequests.map(async (r, i) => {
        await new Promise((resolve) => setTimeout(resolve, 5 * i));
        return postSigned(t, agent.secret, r.fields, r.signature);
      });
      await posts[4]; // some are recorded, the rest are in flight
      await revoker.revokeSigningKey(agent.agentId, keyId, new Date().toISOString());
      const results = await Promise.all(posts);

      const revokedAt = (await revoker.findSigningKey(agent.agentId, keyId))!.revokedAt!;
      let recorded = 0;
      for (const res of results) {
        if (res.statusCode === 201) {
          recorded++;
          assert.ok(res.json().recorded_at <= revokedAt, `${res.json().recorded_at} > ${revokedAt}`);
        } else {
          assert.equal(res.statusCode, 400, res.body);
          assert.equal(res.json().error.param, 'signature.key_id');
        }
      }
      assert.equal((await writer.chainHead(agent.agentId)).seq, recorded);
      const verified = await verifyStoredChain(writer, agent);
      assert.deepEqual(verified.failures, []);
      // After the revoke returned, nothing more is signed with the key, though this process's
      // signature checker saw the key unrevoked: the append transaction refuses it.
      const refused = await postSigned(t, agent.secret, late.fields, late.signature);
      assert.equal(refused.statusCode, 400, refused.body);
      assert.equal(refused.json().error.param, 'signature.key_id');
      assert.equal(await writer.isNonceUsed(agent.agentId, late.signature.nonce), false);
    } finally {
      await t.close();
      await writer.close();
      await revoker.close();
      await kind.cleanup();
    }
  });
});
