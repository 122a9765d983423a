// The append protocol's decisions, without a database: planAppend's order of checks, what each
// outcome writes, and how earlier requests of a batch count for later ones.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { chainHash, GENESIS_PREV_HASH } from '../../src/core/chain.ts';
import { appendQuestions, planAppend, type AppendRequest } from '../../src/ledger/append.ts';
import { agentValueKey, type AppendFacts, type HeadFact } from '../../src/store/port.ts';

const NOW = new Date('2026-11-23T12:00:00.000Z');

function request(overrides: Partial<AppendRequest> = {}): AppendRequest {
  return {
    agentId: 'agt_a', agentHandle: 'alpha', type: 'decision', symbol: 'AAPL', content: '{}',
    contentHash: 'c'.repeat(64), signature: null, linkToken: 'lt_x', idempotency: { key: 'idem-1', fingerprint: 'f1' },
    ...overrides,
  };
}

const signed = (keyId: string, nonce: string, idem: string) =>
  request({ signature: { key_id: keyId, nonce, signature: 'sig' }, idempotency: { key: idem, fingerprint: idem } });

function facts(overrides: Partial<AppendFacts> = {}, head: Partial<HeadFact> = {}): AppendFacts {
  return {
    heads: new Map([['agt_a', { seq: 0, hash: GENESIS_PREV_HASH, recordedAt: null, active: true, ...head }]]),
    usedIdempotencyKeys: new Set(),
    usableSigningKeys: new Set([agentValueKey('agt_a', 'aid_live')]),
    usedNonces: new Set(),
    newestSortKey: null,
    ...overrides,
  };
}

const kinds = (outcomes: { kind: string }[]) => outcomes.map((o) => o.kind);

test('the questions name each agent once, sorted, and every key, signing key and nonce of the batch', () => {
  const q = appendQuestions([request({ agentId: 'agt_b' }), signed('aid_live', 'n1', 'i2'), request({ idempotency: null })]);
  assert.deepEqual(q.agentIds, ['agt_a', 'agt_b']);
  assert.deepEqual(q.idempotencyKeys.map((p) => p.value), ['idem-1', 'i2']);
  assert.deepEqual(q.signingKeyIds, [{ agentId: 'agt_a', value: 'aid_live' }]);
  assert.deepEqual(q.nonces, [{ agentId: 'agt_a', value: 'n1' }]);
});

test('checks run in order: agent active, Idempotency-Key, signing key, nonce', () => {
  const used = facts({
    usedIdempotencyKeys: new Set([agentValueKey('agt_a', 'i-used')]),
    usedNonces: new Set([agentValueKey('agt_a', 'n-used')]),
  });
  // A used key is reported as a conflict even when the signing key is revoked and the nonce spent.
  assert.deepEqual(kinds(planAppend([signed('aid_revoked', 'n-used', 'i-used')], used, NOW).result), ['idempotency_conflict']);
  assert.deepEqual(kinds(planAppend([signed('aid_revoked', 'n-used', 'i-new')], used, NOW).result), ['key_revoked']);
  assert.deepEqual(kinds(planAppend([signed('aid_live', 'n-used', 'i-new')], used, NOW).result), ['nonce_used']);
  assert.deepEqual(kinds(planAppend([signed('aid_live', 'n-new', 'i-new')], used, NOW).result), ['recorded']);
  const paused = facts({}, { active: false });
  assert.deepEqual(kinds(planAppend([signed('aid_revoked', 'n-used', 'i-used')], paused, NOW).result), ['agent_not_active']);
  assert.deepEqual(kinds(planAppend([request({ agentId: 'agt_unknown' })], facts(), NOW).result), ['agent_not_active']);
});

test('a refused request writes nothing; a recorded one writes its record, key, nonce and head', () => {
  const plan = planAppend([signed('aid_revoked', 'n1', 'i1'), signed('aid_live', 'n2', 'i2')], facts(), NOW);
  assert.deepEqual(kinds(plan.result), ['key_revoked', 'recorded']);
  const record = plan.rows.records[0]!;
  assert.equal(plan.rows.records.length, 1);
  assert.deepEqual(plan.rows.idempotencyKeys, [{ agentId: 'agt_a', key: 'i2', fingerprint: 'i2', recordId: record.id, status: 201, createdAt: record.recordedAt }]);
  assert.deepEqual(plan.rows.nonces, [{ agentId: 'agt_a', nonce: 'n2', recordId: record.id }]);
  assert.deepEqual(plan.rows.heads, [{ agentId: 'agt_a', seq: 1, hash: record.chainHash, recordedAt: record.recordedAt, added: { decision: 1, execution: 0, activity: 0, signed: 1 } }]);
});

test('within a batch, a key or nonce used by an earlier record is used for the later one; a refused one frees nothing', () => {
  const plan = planAppend([
    signed('aid_live', 'n1', 'i1'),
    signed('aid_live', 'n2', 'i1'), // same key as the first: conflict
    signed('aid_live', 'n1', 'i3'), // same nonce as the first: used
    signed('aid_revoked', 'n4', 'i4'),
    signed('aid_live', 'n4', 'i4'), // the refused request above claimed neither
  ], facts(), NOW);
  assert.deepEqual(kinds(plan.result), ['recorded', 'idempotency_conflict', 'nonce_used', 'key_revoked', 'recorded']);
  assert.deepEqual(plan.rows.records.map((r) => r.chainSeq), [1, 2]);
});

test('records chain on the head: seq, prev hash, chain hash, ids after the newest, time never before the head', () => {
  const later = '2026-11-23T12:00:05.000Z';
  const head = { seq: 7, hash: 'a'.repeat(64), recordedAt: later };
  const plan = planAppend([request({ idempotency: { key: 'k1', fingerprint: 'f' } }), request({ idempotency: { key: 'k2', fingerprint: 'f' }, type: 'execution' })],
    facts({ newestSortKey: '01ZZZZZZZZZZZZZZZZZZZZZZZZ'.slice(0, 26) }, head), NOW);
  const [first, second] = plan.rows.records;
  assert.ok(first && second);
  assert.equal(first.chainSeq, 8);
  assert.equal(first.prevHash, head.hash);
  assert.equal(second.prevHash, first.chainHash);
  assert.equal(first.recordedAt, later, 'the clock is behind the head: the head time is kept');
  assert.ok(first.id.startsWith('dec_') && second.id.startsWith('exe_'));
  assert.ok(first.id.slice(4) > '01ZZZZZZZZZZZZZZZZZZZZZZZZ' && second.id.slice(4) > first.id.slice(4));
  assert.equal(first.chainHash, chainHash({
    agent: 'alpha', seq: 8, id: first.id, type: 'decision', recordedAt: first.recordedAt,
    contentHash: first.contentHash, prevHash: head.hash, signature: null,
  }));
  assert.deepEqual(plan.rows.heads[0]!.added, { decision: 1, execution: 1, activity: 0, signed: 0 });
});

test('an agent with nothing recorded in the batch keeps its head row untouched', () => {
  const plan = planAppend([request({ idempotency: { key: 'used', fingerprint: 'f' } })],
    facts({ usedIdempotencyKeys: new Set([agentValueKey('agt_a', 'used')]) }), NOW);
  assert.deepEqual(plan.rows, { records: [], idempotencyKeys: [], nonces: [], heads: [] });
});
