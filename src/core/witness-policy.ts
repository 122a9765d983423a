// C2SP tlog-policy: which witnesses a checkpoint needs cosignatures from. Owns parsing the policy
// text (`log <vkey> [url]`, `witness <name> <vkey> [url]`, `group <name> all|any|<k> <member>...`,
// `quorum <name>|none`, `#` comments; names defined before use, each member once in a group, one
// quorum), evaluating the quorum over the witnesses that cosigned, and checking a checkpoint's
// cosignatures against a policy. Pure; Ed25519 injected, so the log (asking witnesses), `ledger
// verify`, the client and the browser share it.

import { checkCosignature, parseCosignerVkey, type Cosignature } from './cosignature.ts';
import { hashesEqual, type LogResult } from './merkle.ts';
import { parseDecimalCount, parseNote, parseVkey, type Ed25519Verify, type Vkey } from './note.ts';

/** A witness of the policy: its policy name, its cosigner vkey (type 0x04), and where it listens (when given). */
export type PolicyWitness = { name: string; vkey: Vkey; vkeyText: string; url: string | null };

/** A group: satisfied when at least `threshold` of its members (witnesses or earlier groups) are. */
export type PolicyGroup = { name: string; threshold: number; members: string[] };

export type WitnessPolicy = {
  /** The `log` lines' vkeys (informative here: the ledger checks its own log key). */
  logs: { vkey: Vkey; url: string | null }[];
  witnesses: PolicyWitness[];
  groups: PolicyGroup[];
  /** The name of the witness or group that must be satisfied; null for `quorum none`. */
  quorum: string | null;
};

/** Implementations should support at least 32 of each; a bound keeps a hostile file small. */
export const MAX_POLICY_ENTRIES = 256;

const NAME = /^[\x21-\x7e]+$/;

function fail<T>(error: string): LogResult<T> {
  return { ok: false, error };
}

function isUrl(text: string): boolean {
  return /^https?:\/\/[^\s]+$/i.test(text);
}

/** Parses a tlog-policy text; every error names its line. */
export function parseWitnessPolicy(text: string): LogResult<WitnessPolicy> {
  if (typeof text !== 'string') return fail('a policy is text');
  const policy: WitnessPolicy = { logs: [], witnesses: [], groups: [], quorum: null };
  const names = new Set<string>();
  let quorumSeen = false;
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const at = `line ${i + 1}`;
    const line = lines[i]!.replace(/#.*$/, '').trim();
    if (line === '') continue;
    const [keyword, ...args] = line.split(/[ \t]+/);
    if (policy.logs.length + policy.witnesses.length + policy.groups.length >= MAX_POLICY_ENTRIES) return fail(`${at}: more than ${MAX_POLICY_ENTRIES} entries`);
    switch (keyword) {
      case 'log': {
        if (args.length < 1 || args.length > 2) return fail(`${at}: log <vkey> [url]`);
        const vkey = parseVkey(args[0]!);
        if (!vkey.ok) return fail(`${at}: log vkey: ${vkey.error}`);
        if (args[1] !== undefined && !isUrl(args[1])) return fail(`${at}: log url is not an http(s) URL`);
        policy.logs.push({ vkey: vkey.value, url: args[1] ?? null });
        break;
      }
      case 'witness': {
        if (args.length < 2 || args.length > 3) return fail(`${at}: witness <name> <vkey> [url]`);
        const [name, vkeyText, url] = args as [string, string, string | undefined];
        if (!NAME.test(name)) return fail(`${at}: invalid name`);
        if (names.has(name)) return fail(`${at}: ${name} is defined twice`);
        const vkey = parseCosignerVkey(vkeyText);
        if (!vkey.ok) return fail(`${at}: witness ${name}: ${vkey.error}`);
        if (url !== undefined && !isUrl(url)) return fail(`${at}: witness ${name}: url is not an http(s) URL`);
        if (policy.witnesses.some((w) => w.vkeyText === vkeyText)) return fail(`${at}: witness ${name}: the same key is another witness's`);
        names.add(name);
        policy.witnesses.push({ name, vkey: vkey.value, vkeyText, url: url?.replace(/\/+$/, '') ?? null });
        break;
      }
      case 'group': {
        if (args.length < 3) return fail(`${at}: group <name> all|any|<k> <member>...`);
        const [name, rule, ...members] = args as [string, string, ...string[]];
        if (!NAME.test(name) || name === 'none') return fail(`${at}: invalid name`);
        if (names.has(name)) return fail(`${at}: ${name} is defined twice`);
        const seen = new Set<string>();
        for (const m of members) {
          if (!names.has(m)) return fail(`${at}: group ${name}: member ${m} is not defined before it`);
          if (seen.has(m)) return fail(`${at}: group ${name}: member ${m} is listed twice`);
          seen.add(m);
        }
        const k = rule === 'all' ? members.length : rule === 'any' ? 1 : parseDecimalCount(rule);
        if (k === null || k < 1 || k > members.length) return fail(`${at}: group ${name}: the threshold must be all, any, or 1 to ${members.length}`);
        names.add(name);
        policy.groups.push({ name, threshold: k, members });
        break;
      }
      case 'quorum': {
        if (quorumSeen) return fail(`${at}: a second quorum line`);
        if (args.length !== 1) return fail(`${at}: quorum <name>|none`);
        if (args[0] !== 'none' && !names.has(args[0]!)) return fail(`${at}: quorum ${args[0]} is not defined before it`);
        quorumSeen = true;
        policy.quorum = args[0] === 'none' ? null : args[0]!;
        break;
      }
      default:
        return fail(`${at}: unknown keyword ${JSON.stringify(keyword)}`);
    }
  }
  if (!quorumSeen) return fail('the policy has no quorum line');
  return { ok: true, value: policy };
}

/**
 * A policy of its own made of witness vkeys and a threshold (`ledger verify --witness <vkey>
 * --quorum N`): each vkey a witness named by its key name, one group of N of them.
 */
export function policyOfWitnesses(vkeys: string[], quorum: number): LogResult<WitnessPolicy> {
  if (vkeys.length === 0) return fail('give at least one witness vkey');
  if (!Number.isSafeInteger(quorum) || quorum < 1 || quorum > vkeys.length) return fail(`the quorum must be from 1 to ${vkeys.length} (the witnesses given)`);
  const lines = vkeys.map((v, i) => `witness w${i + 1} ${v.trim()}`);
  const parsed = parseWitnessPolicy(`${lines.join('\n')}\ngroup given ${quorum} ${vkeys.map((_, i) => `w${i + 1}`).join(' ')}\nquorum given\n`);
  if (!parsed.ok) return fail(parsed.error.replace(/^line \d+: /, ''));
  for (const w of parsed.value.witnesses) w.name = w.vkey.name;
  for (const g of parsed.value.groups) g.members = parsed.value.witnesses.map((w) => w.name);
  if (new Set(parsed.value.witnesses.map((w) => w.name)).size !== vkeys.length) return fail('two witness vkeys have the same key name');
  return parsed;
}

/** Whether the witnesses named in `cosigned` (policy names) satisfy the policy's quorum. */
export function quorumSatisfied(policy: WitnessPolicy, cosigned: ReadonlySet<string>): boolean {
  if (policy.quorum === null) return true;
  const satisfied = new Set(policy.witnesses.filter((w) => cosigned.has(w.name)).map((w) => w.name));
  for (const g of policy.groups) {
    if (g.members.filter((m) => satisfied.has(m)).length >= g.threshold) satisfied.add(g.name);
  }
  return satisfied.has(policy.quorum);
}

/** What a checkpoint's cosignatures say under a policy. */
export type WitnessedCheck = {
  /** The policy's witnesses whose cosignature is on the checkpoint and verifies. */
  cosigned: (Cosignature & { witness: string })[];
  /** The policy's witnesses with a line on the checkpoint that does not verify. */
  invalid: { witness: string; error: string }[];
  /** The policy's witnesses with no line on it. */
  missing: string[];
  satisfied: boolean;
};

/** Checks the cosignatures on a signed checkpoint note against each witness of the policy; null when the note does not parse. */
export function checkWitnessed(note: string, policy: WitnessPolicy, verify: Ed25519Verify): WitnessedCheck | null {
  const parsed = parseNote(note);
  if (!parsed.ok) return null;
  const out: WitnessedCheck = { cosigned: [], invalid: [], missing: [], satisfied: false };
  for (const w of policy.witnesses) {
    const lines = parsed.value.signatures.filter((s) => s.name === w.vkey.name && hashesEqual(s.keyId, w.vkey.keyId));
    if (lines.length === 0) {
      out.missing.push(w.name);
      continue;
    }
    const results = lines.map((s) => checkCosignature(parsed.value.text, s, w.vkey, verify));
    const bad = results.find((r) => !r.ok);
    if (bad && !bad.ok) out.invalid.push({ witness: w.name, error: bad.error });
    else if (results[0]!.ok) out.cosigned.push({ ...results[0]!.value, witness: w.name });
  }
  out.satisfied = quorumSatisfied(policy, new Set(out.cosigned.map((c) => c.witness)));
  return out;
}

/** One line for people: the quorum rule of a policy. */
export function describeQuorum(policy: WitnessPolicy): string {
  if (policy.quorum === null) return 'no cosignature required (quorum none)';
  const group = policy.groups.find((g) => g.name === policy.quorum);
  if (!group) return `a cosignature by ${policy.quorum}`;
  const rule = group.threshold === group.members.length ? 'all' : `${group.threshold} of`;
  return `${rule} ${group.members.join(', ')}${group.members.some((m) => policy.groups.some((g) => g.name === m)) ? ' (groups)' : ''}`;
}
