// C2SP tlog-policy (src/core/witness-policy.ts): the grammar's rules, quorum evaluation over nested
// groups (the spec's example), and checking a checkpoint's cosignatures against a policy with the
// reference's constructed exchange (log seed 32×0x01, witness seed 32×0x02).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { verifyRaw } from '../../src/core/ed25519.ts';
import { checkWitnessed, describeQuorum, parseWitnessPolicy, policyOfWitnesses, quorumSatisfied } from '../../src/core/witness-policy.ts';
import { seededWitnessKey, value, vectorFile, vectors } from '../witness/helpers.ts';

const W = vectors.witness.vkey;
const keys = ['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'].map((n, i) => seededWitnessKey(`${n.toLowerCase()}.example/w`, 0x40 + i));

describe('tlog-policy parsing', () => {
  it('reads witnesses, groups, one quorum, comments and log lines', () => {
    const p = value(parseWitnessPolicy(`# a comment\nlog ${vectors.log.vkey} https://ledger.example/log\nwitness W1 ${W} https://witness.example/\ngroup G any W1 # trailing\nquorum G\n`));
    assert.equal(p.logs.length, 1);
    assert.deepEqual(p.witnesses.map((w) => [w.name, w.vkeyText, w.url]), [['W1', W, 'https://witness.example']]);
    assert.deepEqual(p.groups, [{ name: 'G', threshold: 1, members: ['W1'] }]);
    assert.equal(p.quorum, 'G');
    assert.equal(value(parseWitnessPolicy('quorum none\n')).quorum, null);
  });

  for (const [text, error] of [
    [`witness W1 ${W}\n`, /no quorum line/],
    [`witness W1 ${W}\nquorum W1\nquorum W1\n`, /line 3: a second quorum/],
    [`quorum W1\nwitness W1 ${W}\n`, /line 1: quorum W1 is not defined before it/],
    [`witness W1 ${W}\nwitness W1 ${keys[0]!.vkey}\nquorum W1\n`, /line 2: W1 is defined twice/],
    [`witness W1 ${vectors.log.vkey}\nquorum W1\n`, /line 1: witness W1: not a cosignature\/v1 key/],
    [`witness W1 ${W}\ngroup G 2 W1\nquorum G\n`, /line 2: group G: the threshold must be all, any, or 1 to 1/],
    [`witness W1 ${W}\ngroup G any W1 W1\nquorum G\n`, /member W1 is listed twice/],
    [`witness W1 ${W}\ngroup G any W2\nquorum G\n`, /member W2 is not defined before it/],
    [`witness W1 ${W} ftp://x\nquorum W1\n`, /url is not an http\(s\) URL/],
    [`witness W1 ${W}\nwitness W2 ${W}\nquorum W1\n`, /the same key is another witness's/],
    [`cosigner W1 ${W}\nquorum none\n`, /line 1: unknown keyword "cosigner"/],
  ] as const) {
    it(`refuses: ${error.source}`, () => {
      const r = parseWitnessPolicy(text);
      assert.equal(r.ok, false);
      assert.match(!r.ok ? r.error : '', error);
    });
  }
});

describe('quorum', () => {
  // The spec's example: group X 2 X1 X2 X3 / group Y any Y1 Y2 Y3 / group XY all X Y / quorum XY.
  const p = value(parseWitnessPolicy(`${keys.map((k, i) => `witness ${['X1', 'X2', 'X3', 'Y1', 'Y2', 'Y3'][i]} ${k.vkey}`).join('\n')}
group X 2 X1 X2 X3
group Y any Y1 Y2 Y3
group XY all X Y
quorum XY
`));
  for (const [cosigned, expected] of [
    [['X1', 'X2', 'Y3'], true],
    [['X1', 'X3', 'Y1', 'Y2'], true],
    [['X1', 'Y1', 'Y2', 'Y3'], false],
    [['X1', 'X2', 'X3'], false],
    [[], false],
  ] as const) {
    it(`${cosigned.join(', ') || 'nobody'}: ${expected}`, () => assert.equal(quorumSatisfied(p, new Set(cosigned)), expected));
  }
  it('describes itself', () => assert.equal(describeQuorum(p), 'all X, Y (groups)'));
  it('--witness/--quorum make a group of N', () => {
    const q = value(policyOfWitnesses([keys[0]!.vkey, keys[1]!.vkey], 1));
    assert.deepEqual(q.witnesses.map((w) => w.name), ['x1.example/w', 'x2.example/w']);
    assert.equal(quorumSatisfied(q, new Set(['x2.example/w'])), true);
    assert.equal(policyOfWitnesses([keys[0]!.vkey], 2).ok, false);
    assert.equal(policyOfWitnesses([], 1).ok, false);
  });
});

describe('a checkpoint checked against a policy', () => {
  const response = vectorFile('add-checkpoint-response.txt');
  const cosigned = vectors.checkpoint_8 + response;
  const policy = value(parseWitnessPolicy(`witness W1 ${W}\nwitness other ${keys[0]!.vkey}\ngroup any-one any W1 other\nquorum any-one\n`));

  it('counts the reference cosignature toward the quorum, with its timestamp', () => {
    const r = checkWitnessed(cosigned, policy, verifyRaw)!;
    assert.deepEqual(r.cosigned.map((c) => [c.witness, c.time]), [['W1', vectors.time]]);
    assert.deepEqual(r.missing, ['other']);
    assert.equal(r.satisfied, true);
  });

  it('refuses the checkpoint alone, and a cosignature with one byte of its time changed', () => {
    assert.equal(checkWitnessed(vectors.checkpoint_8, policy, verifyRaw)!.satisfied, false);
    const line = response.trimEnd();
    const b64 = line.slice(line.lastIndexOf(' ') + 1);
    const bytes = Buffer.from(b64, 'base64');
    bytes[11]! ^= 1;
    const tampered = vectors.checkpoint_8 + `${line.slice(0, line.lastIndexOf(' ') + 1)}${bytes.toString('base64')}\n`;
    const r = checkWitnessed(tampered, policy, verifyRaw)!;
    assert.equal(r.satisfied, false);
    assert.match(r.invalid[0]?.error ?? '', /does not verify/);
  });
});
