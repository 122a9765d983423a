// `ledger demo`: a few demo agents with about a year of decisions on synthetic prices, so that a
// newcomer sees full profiles (portfolio, series, metrics, hit rates) within a minute.
// It owns the demo agents, their rule-based decisions and theses. Every decision goes through the
// record path exactly as a real one (DecisionService: validation, idempotency, the append
// protocol, the chain; one agent signs with an Ed25519 key whose private half is dropped at the
// end), with an injected clock that walks from a year ago to now: recorded_at is backdated for
// these agents alone, and the clock never runs backwards within a chain. Each decision is then
// priced at its recorded_at by the synthetic model, as the pricing job would price a live one.
// Agents are flagged demo (hidden from /v1/ledger unless include_demo=true; the profile says so).
// One agent buys and holds a symbol the synthetic model splits within the demo's year and that pays
// dividends (the first of SPLIT_CANDIDATES that does, for the model's seed), so its page shows both.
// Then the market facts of every demo symbol are kept as the pricing job keeps them (the corporate
// actions, then the raw closes: market/facts.ts), so no report meets an action learned late.
// A second run creates nothing: it refuses, naming the agents that exist.

import { generateKeyPairSync, sign, type KeyObject } from 'node:crypto';
import { DEFAULT_BENCHMARK } from '../config.ts';
import type { JsonValue } from '../core/json.ts';
import type { Agent } from '../domain/types.ts';
import type { Clock } from '../domain/clock.ts';
import { DecisionService } from '../ledger/decisions.ts';
import { errors, fail, ok, type Result } from '../domain/errors.ts';
import { SigningKeys } from '../ledger/keys.ts';
import { Operators } from '../ledger/operators.ts';
import { decisionAsserter, signatureChecker } from '../ledger/signing.ts';
import { dateOfDay, dayNumber, isWeekday, stockSession } from '../method/perf/calendar.ts';
import { MarketFacts } from '../market/facts.ts';
import type { MarketData, MarketStore, PriceObservation } from '../market/port.ts';
import type { LedgerStore } from '../store/port.ts';

type Plan = {
  suffix: string;
  displayName: string;
  /** `momentum`: the 20-session rule below, over `symbols`; `hold`: buy one symbol the model splits within the demo, then hold it. */
  rule: 'momentum' | 'hold';
  symbols: string[];
  /** Days between decisions. */
  every: number;
  sizing: 'target_allocation_pct' | 'notional' | 'quantity';
  horizon: string;
  signed: boolean;
};

export const DEMO_PLANS: Plan[] = [
  { suffix: 'momentum', rule: 'momentum', displayName: 'Demo: Momentum (synthetic prices)', symbols: ['AAPL', 'MSFT', 'NVDA', 'AMZN', 'GOOGL'], every: 2, sizing: 'target_allocation_pct', horizon: '1 month', signed: true },
  { suffix: 'value', rule: 'momentum', displayName: 'Demo: Value (synthetic prices)', symbols: ['KO', 'JNJ', 'PG', 'XOM', 'JPM'], every: 4, sizing: 'notional', horizon: '3 months', signed: false },
  { suffix: 'crypto', rule: 'momentum', displayName: 'Demo: Crypto trend (synthetic prices)', symbols: ['BTC/USD', 'ETH/USD'], every: 3, sizing: 'quantity', horizon: '2 weeks', signed: false },
  { suffix: 'income', rule: 'hold', displayName: 'Demo: Buy and hold through a split and dividends (synthetic prices)', symbols: [], every: 7, sizing: 'target_allocation_pct', horizon: '1 year', signed: false },
];

/** Symbols the hold agent may take, in order: the first the synthetic model splits (forward) within the demo and pays a dividend on. */
export const SPLIT_CANDIDATES = [
  'AVGO', 'WMT', 'CMG', 'NVDA', 'AAPL', 'MSFT', 'KO', 'PG', 'JNJ', 'XOM', 'JPM', 'HD', 'COST', 'PEP', 'MRK', 'ABBV', 'CVX', 'MCD', 'LLY', 'UNH',
  'V', 'MA', 'TXN', 'QCOM', 'ORCL', 'CSCO', 'IBM', 'AMGN', 'HON', 'UNP', 'CAT', 'LOW', 'SBUX', 'NKE', 'GE', 'DIS', 'PFE', 'WFC', 'BAC', 'INTC',
];
/** Days into the demo before the split (the agent holds by then) and before its end (the page shows days after it). */
const SPLIT_MARGIN_DAYS = 14;

export type DemoOptions = { prefix: string; days: number };
export type DemoAgent = { handle: string; agent_id: string; decisions: number; signed: boolean; first_recorded_at: string; last_recorded_at: string };
export type DemoDeps = {
  store: LedgerStore;
  market: MarketStore;
  /** The synthetic model every demo decision is priced by. */
  synthetic: MarketData;
  /** LEDGER_BENCHMARK, whose facts are kept with the demo symbols' (default SPY). */
  benchmark?: string;
  now: Date;
  progress?: (line: string) => void;
};

/** A clock the demo moves forward. */
class WalkingClock implements Clock {
  constructor(public t: number) {}
  now(): Date {
    return new Date(this.t);
  }
}

export function demoHandles(prefix: string): string[] {
  return DEMO_PLANS.map((p) => `${prefix}-${p.suffix}`);
}

export async function createDemo(deps: DemoDeps, options: DemoOptions): Promise<Result<DemoAgent[]>> {
  const handles = demoHandles(options.prefix);
  const taken: string[] = [];
  for (const handle of handles) {
    const existing = await deps.store.findAgentByHandle(handle);
    if (existing) taken.push(`${handle} (${(await deps.store.chainHead(existing.id)).seq} records)`);
  }
  if (taken.length > 0) {
    return fail({ ...errors.invalidRequest(`demo agents already exist: ${taken.join(', ')}; nothing was created (records are permanent: use --prefix for another set)`, 'prefix'), status: 409, code: 'demo_exists' });
  }
  const out: DemoAgent[] = [];
  for (const plan of DEMO_PLANS) {
    const created = await demoAgent(deps, plan, `${options.prefix}-${plan.suffix}`, options.days);
    if (!created.ok) return created;
    out.push(created.value);
  }
  const kept = await keepFacts(deps);
  if (!kept.ok) return kept;
  return ok(out);
}

/** The corporate actions, then the raw closes, of every demo symbol and the benchmark, as the pricing job keeps them. */
async function keepFacts(deps: DemoDeps): Promise<Result<void>> {
  const facts = new MarketFacts({ store: deps.market, providers: { synthetic: deps.synthetic }, benchmark: deps.benchmark ?? DEFAULT_BENCHMARK, now: () => deps.now });
  while (!(await facts.step())) {
    const status = facts.status();
    if (status.state === 'waiting') return fail(errors.providerError(`the synthetic model's facts could not be kept: ${status.last_error}`));
  }
  deps.progress?.(`market facts kept: ${facts.status().actions_added} corporate actions of the demo symbols`);
  return ok(undefined);
}

/**
 * The symbol of the hold agent: the first candidate with a forward split at least SPLIT_MARGIN_DAYS
 * inside the demo's days and a cash dividend within them, else the first with a split, else the first.
 */
async function splitSymbol(market: MarketData, from: number, to: number): Promise<string> {
  const day = (t: number) => dateOfDay(Math.floor(t / 86_400_000));
  const inside = (a: { ex_date: string | null }) => a.ex_date !== null && a.ex_date >= day(from + SPLIT_MARGIN_DAYS * 86_400_000) && a.ex_date <= day(to - SPLIT_MARGIN_DAYS * 86_400_000);
  let splitOnly: string | null = null;
  for (let i = 0; i < SPLIT_CANDIDATES.length; i += 10) { // a few at a time: each is a walk of the model
    const batch = SPLIT_CANDIDATES.slice(i, i + 10);
    const got = await market.corporateActions(batch, day(from), day(to));
    const actions = got.ok ? got.value.filter(inside) : [];
    const splits = (s: string) => actions.some((a) => a.symbol === s && a.type === 'forward_split');
    const pays = (s: string) => actions.some((a) => a.symbol === s && a.type === 'cash_dividend');
    const found = batch.find((s) => splits(s) && pays(s));
    if (found !== undefined) return found;
    splitOnly ??= batch.find(splits) ?? null;
  }
  return splitOnly ?? (SPLIT_CANDIDATES[0] as string);
}

async function demoAgent(deps: DemoDeps, plan: Plan, handle: string, days: number): Promise<Result<DemoAgent>> {
  const end = deps.now.getTime();
  const instants = schedule(plan, end - days * 86_400_000, end);
  const symbols = plan.rule === 'hold' ? [await splitSymbol(deps.synthetic, end - days * 86_400_000, end)] : plan.symbols;
  const clock = new WalkingClock(instants[0] ?? end);
  const created = await new Operators(deps.store, clock).createAgent({ handle, displayName: plan.displayName, demo: true });
  if (!created.ok) return created;
  const agent = created.value.agent;
  const signer = plan.signed ? await registerSigner(deps.store, clock, agent) : null;
  if (signer && !signer.ok) return signer;
  const decisions = new DecisionService({ store: deps.store, clock, baseUrl: '', checkSignature: signatureChecker(deps.store) });
  const assert = decisionAsserter({ store: deps.store, clock });
  const state = new Map<string, number>();
  let last = '';
  try {
    for (const [i, t] of instants.entries()) {
      clock.t = t;
      const symbol = symbols[i % symbols.length] as string;
      const body = plan.rule === 'hold' ? holdDecision(symbol, i) : await decide(deps.synthetic, plan, symbol, new Date(t), state);
      if (signer?.ok) {
        const nonce = `${handle}-${i}`;
        const assertion = await assert(agent, { ...body, occurred_at: new Date(t - 60_000).toISOString(), nonce });
        if (!assertion.ok) return assertion;
        body.occurred_at = new Date(t - 60_000).toISOString();
        body.signature = { key_id: signer.value.keyId, nonce, signature: sign(null, Buffer.from(assertion.value.payload), signer.value.privateKey).toString('base64url') };
      }
      const outcome = await decisions.record({ agent, body, idempotencyKey: `${handle}-decision-${i}` });
      if (outcome.kind === 'error') return fail(outcome.error);
      const recorded = JSON.parse(outcome.body) as { id: string; recorded_at: string; verification: { chain_seq: number } };
      await observe(deps, agent, recorded, symbol);
      last = recorded.recorded_at;
      if (i % 50 === 49) deps.progress?.(`${handle}: ${i + 1} of ${instants.length} decisions`);
    }
  } finally {
    await decisions.drain();
  }
  deps.progress?.(`${handle}: ${instants.length} decisions recorded`);
  return ok({ handle, agent_id: agent.id, decisions: instants.length, signed: plan.signed, first_recorded_at: new Date(instants[0] ?? end).toISOString(), last_recorded_at: last });
}

/** Decision instants: every `plan.every` days, stocks on weekdays in the session, crypto at any hour. */
function schedule(plan: Plan, from: number, to: number): number[] {
  const crypto = plan.symbols[0]?.includes('/') ?? false;
  const out: number[] = [];
  let k = 0;
  for (let day = Math.floor(from / 86_400_000) + 1; day * 86_400_000 < to; day += plan.every) {
    let d = day;
    if (!crypto) while (!isWeekday(d)) d++;
    const minutes = 37 + ((k++ * 97) % 300); // spread over the day
    const t = crypto ? d * 86_400_000 + minutes * 60_000 : stockSession(d).open + minutes * 60_000;
    if (t < to && (out.length === 0 || t > (out[out.length - 1] as number))) out.push(t);
  }
  return out;
}

/**
 * A small rule on the synthetic closes: the 20-day return of the symbol decides. Up more than
 * 2 %: buy or add; down more than 2 %: reduce, sell or close; otherwise hold.
 */
async function decide(market: MarketData, plan: Plan, symbol: string, at: Date, held: Map<string, number>): Promise<{ [key: string]: JsonValue }> {
  const today = dateOfDay(Math.floor(at.getTime() / 86_400_000));
  const bars = await market.dailyBars(symbol, dateOfDay(dayNumber(today) - 40), dateOfDay(dayNumber(today) - 1));
  const closes = bars.ok ? bars.value.bars.map((b) => Number(b.close)) : [];
  const last = closes.at(-1);
  const before = closes.at(-21) ?? closes[0];
  const move = last !== undefined && before !== undefined ? last / before - 1 : 0;
  const count = held.get(symbol) ?? 0;
  let action: string;
  if (move > 0.02) action = count === 0 ? 'BUY' : 'INCREASE';
  else if (move < -0.02) action = count === 0 ? 'HOLD' : count === 1 ? 'CLOSE' : 'REDUCE';
  else action = 'HOLD';
  held.set(symbol, action === 'CLOSE' ? 0 : action === 'BUY' || action === 'INCREASE' ? count + 1 : action === 'REDUCE' ? count - 1 : count);
  const pct = `${(move * 100).toFixed(1)} %`;
  const body: { [key: string]: JsonValue } = {
    symbol,
    action,
    asset_class: symbol.includes('/') ? 'CRYPTO' : 'US_EQUITY',
    confidence: (0.5 + Math.min(0.45, Math.abs(move) * 3)).toFixed(2),
    time_horizon: plan.horizon,
    thesis: `Demo decision on synthetic prices. ${symbol} moved ${pct} over 20 sessions; the rule says ${action}.`,
    metadata: { demo: true, rule: '20-session return beyond ±2 %' },
  };
  if (action === 'BUY' || action === 'INCREASE') {
    if (plan.sizing === 'target_allocation_pct') body.target_allocation_pct = String(10 * Math.min(count + 1, 3));
    if (plan.sizing === 'notional') body.notional = '8000';
    if (plan.sizing === 'quantity') body.quantity = symbol.startsWith('BTC') ? '0.2' : '3';
  }
  return body;
}

/** The hold agent: buys 80 % of the portfolio in its symbol first, then says it holds it. */
function holdDecision(symbol: string, i: number): { [key: string]: JsonValue } {
  const body: { [key: string]: JsonValue } = {
    symbol,
    action: i === 0 ? 'BUY' : 'HOLD',
    asset_class: 'US_EQUITY',
    confidence: '0.70',
    time_horizon: '1 year',
    thesis: i === 0
      ? `Demo decision on synthetic prices. Buy ${symbol} and hold it for the year, through its split and its dividends.`
      : `Demo decision on synthetic prices. Still holding ${symbol}: splits change the share count, dividends are paid into cash.`,
    metadata: { demo: true, rule: 'buy once, then hold' },
  };
  if (i === 0) body.target_allocation_pct = '80';
  return body;
}

async function registerSigner(store: LedgerStore, clock: Clock, agent: Agent): Promise<Result<{ keyId: string; privateKey: KeyObject }>> {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const raw = publicKey.export({ format: 'jwk' }).x as string;
  const registered = await new SigningKeys(store, clock).register(agent, { publicKey: raw, label: 'demo signer (its private key was discarded after the demo)' });
  if (!registered.ok) return registered;
  return ok({ keyId: registered.value.key.id, privateKey });
}

/** The price at receipt, as the pricing job would record it, from the synthetic model. */
async function observe(deps: DemoDeps, agent: Agent, recorded: { id: string; recorded_at: string; verification: { chain_seq: number } }, symbol: string): Promise<void> {
  const got = await deps.synthetic.latestTrade(symbol, new Date(recorded.recorded_at));
  const base = {
    recordId: recorded.id, agentId: agent.id, chainSeq: recorded.verification.chain_seq, symbol, askedAt: recorded.recorded_at,
    observedAt: recorded.recorded_at, source: 'synthetic' as const, feed: null, synthetic: true,
  };
  const row: PriceObservation = got.ok
    ? { ...base, status: 'priced', price: got.value.price, providerTime: got.value.provider_time, ageMs: got.value.age_ms, stale: got.value.stale }
    : { ...base, status: 'unpriced', reason: `${got.error.code}: ${got.error.message}` };
  await deps.market.saveObservations([row]);
}
