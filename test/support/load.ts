// Write load over HTTP for the scale and fault tests: writers post decisions back to back, each
// as one agent to one node (chosen again for every request), and every answer is kept, so a test
// can check what clients saw (status codes, error bodies, Retry-After), when writes stopped and
// resumed, and that every acknowledged (201) record is in the database afterwards.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import type { LedgerStore } from '../../src/store/port.ts';
import { assertChainVerifies } from '../api/record-helpers.ts';

export type LoadAgent = { agentId: string; handle: string; secret: string };
export type Target = { name: string; url: string };

export type Outcome = {
  node: string;
  agent: string;
  key: string;
  /** The HTTP status, or 0 when no answer came (refused, reset, timed out). */
  status: number;
  /** The error body's code, or the network error's message when no answer came. */
  error: string | null;
  retryAfter: string | null;
  id: string | null;
  seq: number | null;
  proofUrl: string | null;
  sentAt: number;
  answeredAt: number;
};

let keys = 0;
export const uniqueKey = (prefix = 'load') => `${prefix}-${process.pid}-${Date.now().toString(36)}-${++keys}`;

/** One POST /v1/decisions; never throws. */
export async function postDecision(target: Target, agent: LoadAgent, key = uniqueKey(), timeoutMs = 20_000, body: object = { symbol: 'AAPL', action: 'BUY', quantity: '1' }): Promise<Outcome> {
  const sentAt = Date.now();
  const base = { node: target.name, agent: agent.handle, key, sentAt };
  try {
    const res = await fetch(`${target.url}/v1/decisions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${agent.secret}`, 'content-type': 'application/json', 'idempotency-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    const json = (() => {
      try {
        return JSON.parse(text) as { id?: string; proof_url?: string; verification?: { chain_seq?: number }; error?: { code?: string } };
      } catch {
        return { error: { code: `unparsable body: ${text.slice(0, 80)}` } };
      }
    })();
    return {
      ...base,
      status: res.status,
      error: json.error?.code ?? null,
      retryAfter: res.headers.get('retry-after'),
      id: res.status === 201 ? json.id ?? null : null,
      seq: res.status === 201 ? json.verification?.chain_seq ?? null : null,
      proofUrl: res.status === 201 ? json.proof_url ?? null : null,
      answeredAt: Date.now(),
    };
  } catch (err) {
    const cause = (err as { cause?: { code?: string } }).cause?.code;
    return { ...base, status: 0, error: cause ?? (err as Error).name, retryAfter: null, id: null, seq: null, proofUrl: null, answeredAt: Date.now() };
  }
}

export type Writer = { agent: LoadAgent; target: () => Target };

/** Writers posting back to back until stop(); a writer that is refused waits `pauseMs` before it tries again. */
export class WriteLoad {
  readonly outcomes: Outcome[] = [];
  private running = false;
  private done: Promise<void> = Promise.resolve();

  constructor(
    private readonly writers: Writer[],
    private readonly options: { timeoutMs?: number; pauseMs?: number; maxPerWriter?: number; body?: () => object } = {},
  ) {}

  start(): this {
    this.running = true;
    this.done = Promise.all(this.writers.map((w) => this.run(w))).then(() => undefined);
    return this;
  }

  private async run(writer: Writer): Promise<void> {
    const max = this.options.maxPerWriter ?? Infinity;
    for (let i = 0; this.running && i < max; i++) {
      const outcome = await postDecision(writer.target(), writer.agent, uniqueKey(writer.agent.handle), this.options.timeoutMs, this.options.body?.());
      this.outcomes.push(outcome);
      if (outcome.status !== 201) await new Promise((resolve) => setTimeout(resolve, this.options.pauseMs ?? 50));
    }
  }

  /** Resolves once `count` more 201s have come in (or fails after `timeoutMs`). */
  async acknowledgedAtLeast(count: number, timeoutMs = 30_000): Promise<void> {
    const target = acknowledged(this.outcomes).length + count;
    const deadline = Date.now() + timeoutMs;
    while (acknowledged(this.outcomes).length < target) {
      if (Date.now() > deadline) {
        this.running = false; // a failing test must not leave writers posting after it
        assert.fail(`fewer than ${count} writes acknowledged within ${timeoutMs} ms: ${summary(this.outcomes)}`);
      }
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  }

  async stop(): Promise<Outcome[]> {
    this.running = false;
    await this.done;
    return this.outcomes;
  }

  /** Waits for every writer to finish its `maxPerWriter` writes. */
  async finished(): Promise<Outcome[]> {
    await this.done;
    return this.outcomes;
  }
}

export const acknowledged = (outcomes: Outcome[]) => outcomes.filter((o) => o.status === 201);

/** Counts of what clients saw, e.g. `201 x 530, 503 service_unavailable x 12, 0 ECONNREFUSED x 3`. */
export function summary(outcomes: Outcome[]): string {
  const counts = new Map<string, number>();
  for (const o of outcomes) {
    const k = o.status === 201 ? '201' : `${o.status} ${o.error}`;
    counts.set(k, (counts.get(k) ?? 0) + 1);
  }
  return [...counts].map(([k, n]) => `${k} x ${n}`).join(', ') || 'nothing';
}

/**
 * Every answer that is not a 201 is a 503 service_unavailable with Retry-After (or, when `noAnswer`
 * allows it, no answer at all: the node itself was killed or cut off). Never a 500.
 */
export function assertOnlyUnavailable(outcomes: Outcome[], allow: { noAnswer?: boolean; statuses?: number[] } = {}): void {
  for (const o of outcomes) {
    if (o.status === 201 || allow.statuses?.includes(o.status)) continue;
    if (o.status === 0) {
      assert.ok(allow.noAnswer, `a request to ${o.node} got no answer (${o.error}); ${summary(outcomes)}`);
      continue;
    }
    assert.equal(o.status, 503, `a request to ${o.node} answered ${o.status} ${o.error}; ${summary(outcomes)}`);
    assert.equal(o.error, 'service_unavailable');
    assert.match(o.retryAfter ?? '', /^[1-9][0-9]*$/, 'a 503 says when to retry (Retry-After)');
  }
}

/** When the first write sent at or after `since` was acknowledged (ms since the epoch), or null. */
export function firstAcknowledgedAfter(outcomes: Outcome[], since: number): number | null {
  const times = acknowledged(outcomes).filter((o) => o.sentAt >= since).map((o) => o.answeredAt);
  return times.length > 0 ? Math.min(...times) : null;
}

/** The longest time between two consecutive acknowledgements among `outcomes`, in ms. */
export function longestGap(outcomes: Outcome[], from: number, to: number): number {
  const times = [from, ...acknowledged(outcomes).map((o) => o.answeredAt).filter((t) => t > from && t < to).sort((a, b) => a - b), to];
  return Math.max(...times.slice(1).map((t, i) => t - times[i]!));
}

/**
 * Every agent's chain in the store is gapless and verifies, and holds every record a client got
 * a 201 for (with the id and seq it was told). Answers the number of records checked.
 */
export async function assertAcknowledgedDurable(store: LedgerStore, agents: LoadAgent[], outcomes: Outcome[]): Promise<number> {
  let total = 0;
  for (const agent of agents) {
    const records = await assertChainVerifies(store, agent);
    const bySeq = new Map(records.map((r) => [r.chainSeq, r.id]));
    for (const o of acknowledged(outcomes).filter((x) => x.agent === agent.handle)) {
      assert.equal(bySeq.get(o.seq!), o.id, `acknowledged ${o.id} (seq ${o.seq}, ${agent.handle}) is in the chain`);
    }
    total += records.length;
  }
  return total;
}

const LEDGER_BIN = fileURLToPath(new URL('../../bin/ledger.js', import.meta.url));

/**
 * `ledger verify <source>` as an operator runs it; answers its exit code and output. Asynchronous:
 * the proxies between the nodes and their database run in this process and must keep forwarding.
 */
export function ledgerVerify(source: string): Promise<{ code: number | null; out: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [LEDGER_BIN, 'verify', source, '--workers', '0'], { stdio: ['ignore', 'pipe', 'pipe'], timeout: 60_000 });
    let out = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (out += c.toString()));
    child.on('close', (code) => resolve({ code, out }));
  });
}

export const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
