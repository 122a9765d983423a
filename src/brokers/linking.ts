// Linking fills to decisions (ledger-interface rules 3 and 4). Pure rules.
// It reads a link token out of a client_order_id, and decides which decision a fill links to, by
// which method, and within which inferred-link window. The caller looks decisions up (by token; by
// agent and symbol for inference) and records the link inside the execution's content, where it is
// hashed and can never change.
//
// Rules:
// 1. `link_token`: the client order id of the fill's order lineage (the original order first, then
//    the replacements and the bracket parent) is a link token, or a link token plus `-` and a suffix,
//    naming a decision of the same agent recorded before the fill.
// 2. Otherwise (always for SnapTrade, which reports no client order id) `inferred`: the newest
//    decision of the same agent, same symbol and matching side (BUY, INCREASE -> buy; SELL, REDUCE,
//    CLOSE -> sell; HOLD never), recorded before the fill and at most INFERRED_WINDOW_WEEKDAYS
//    weekdays before it, not yet linked to another order. Partial fills of one order may all link to
//    the same decision. An inferred link never counts as verification.
// 3. A decision recorded after the fill (or, for a fill reported only by date, on or after that
//    day, UTC) is never linked, by either method. Equal instants are not "before".

import { parseRfc3339 } from '../core/time.ts';
import type { BrokerFill, FillSide } from './normalise.ts';

export type LinkMethod = 'link_token' | 'inferred';
export type Link = { method: LinkMethod; decision_id: string };

export type LinkableDecision = {
  id: string;
  agent: string;
  symbol: string;
  action: string;
  /** the service's recorded_at, `YYYY-MM-DDTHH:MM:SS.sssZ` */
  recordedAt: string;
  /** Orders (see `orderKey`) already linked to this decision, by either method. */
  linkedOrderKeys?: readonly string[];
};

/** The window of an inferred link: 5 trading days, counted as weekdays in UTC (holidays not subtracted). */
export const INFERRED_WINDOW_WEEKDAYS = 5;

/** `lt_` + 24 lower-case Crockford base32 characters, as src/ledger/ids.ts issues them. */
const LINK_TOKEN = /^(lt_[0-9a-hjkmnp-tv-z]{24})(?:-([A-Za-z0-9_.-]{1,100}))?$/;

/** The link token a client order id carries (`<token>` or `<token>-<suffix>`), or null. */
export function parseLinkToken(clientOrderId: string | null | undefined): string | null {
  if (typeof clientOrderId !== 'string') return null;
  const m = LINK_TOKEN.exec(clientOrderId);
  return m ? (m[1] as string) : null;
}

/** The token of the fill's order lineage, the original order first: a replacement inherits it. */
export function linkTokenOf(fill: BrokerFill): string | null {
  for (let i = fill.lineage.length - 1; i >= 0; i--) {
    const token = parseLinkToken(fill.lineage[i]?.clientOrderId);
    if (token !== null) return token;
  }
  return parseLinkToken(fill.clientOrderId);
}

/** Identifies the order a fill belongs to across replacements: the original order's id. */
export function orderKey(fill: BrokerFill): string {
  const root = fill.lineage[fill.lineage.length - 1];
  return `${fill.broker}:${fill.accountRef}:${root ? root.orderId : `fill:${fill.brokerFillId}`}`;
}

export const ACTION_SIDE: Readonly<Record<string, FillSide | null>> = {
  BUY: 'buy', INCREASE: 'buy', SELL: 'sell', REDUCE: 'sell', CLOSE: 'sell', HOLD: null,
};

/** Symbols compare case-insensitively and without separators (`BTC/USD` is `BTCUSD`). */
export function sameSymbol(a: string, b: string): boolean {
  const norm = (s: string): string => s.toUpperCase().replace(/[/\-\s]/g, '');
  return norm(a) === norm(b);
}

/** The instant a fill happened, as epoch ms plus whether sub-millisecond digits follow; null if unreadable. */
export function fillTime(fill: BrokerFill): { ms: number; sub: boolean } | null {
  if (fill.filledAtPrecision === 'date') {
    const r = parseRfc3339(`${fill.filledAt}T00:00:00Z`);
    return r.ok ? { ms: r.epochMs, sub: false } : null;
  }
  const r = parseRfc3339(fill.filledAt);
  return r.ok ? { ms: r.epochMs, sub: r.subMillisecond } : null;
}

/** Strictly before: a date-only fill's time is the start of its day, so that day's decisions fail. */
export function recordedBefore(decision: LinkableDecision, fill: BrokerFill): boolean {
  const d = parseRfc3339(decision.recordedAt);
  const f = fillTime(fill);
  if (!d.ok || f === null) return false;
  return d.epochMs < f.ms || (d.epochMs === f.ms && f.sub && !d.subMillisecond);
}

/** The end of the inferred window of a decision recorded at `recordedMs`. */
export function inferredWindowEnd(recordedMs: number): number {
  const DAY = 86_400_000;
  let t = recordedMs;
  for (let weekdays = 0; weekdays < INFERRED_WINDOW_WEEKDAYS; ) {
    t += DAY;
    const dow = new Date(t).getUTCDay();
    if (dow !== 0 && dow !== 6) weekdays++;
  }
  return t;
}

function withinWindow(decision: LinkableDecision, fill: BrokerFill): boolean {
  const d = parseRfc3339(decision.recordedAt);
  const f = fillTime(fill);
  return d.ok && f !== null && f.ms <= inferredWindowEnd(d.epochMs);
}

/**
 * The link of one fill for `agent`. `tokenDecision` is the decision the fill's link token names
 * (looked up by the caller with `linkTokenOf`), or null; `candidates` are the agent's decisions
 * the caller considers for inference (any superset is fine: the rules filter them).
 */
export function decideLink(input: {
  agent: string;
  fill: BrokerFill;
  tokenDecision: LinkableDecision | null;
  candidates: readonly LinkableDecision[];
}): Link | null {
  const { agent, fill, tokenDecision } = input;
  const token = linkTokenOf(fill);
  if (token !== null && tokenDecision !== null && tokenDecision.agent === agent && recordedBefore(tokenDecision, fill)) {
    return { method: 'link_token', decision_id: tokenDecision.id };
  }
  const key = orderKey(fill);
  let best: LinkableDecision | null = null;
  for (const d of input.candidates) {
    if (d.agent !== agent || ACTION_SIDE[d.action] !== fill.side || !sameSymbol(d.symbol, fill.symbol)) continue;
    if (!recordedBefore(d, fill) || !withinWindow(d, fill)) continue;
    const linked = d.linkedOrderKeys ?? [];
    if (linked.length > 0 && !linked.includes(key)) continue;
    if (best === null || d.recordedAt > best.recordedAt || (d.recordedAt === best.recordedAt && d.id > best.id)) best = d;
  }
  return best === null ? null : { method: 'inferred', decision_id: best.id };
}

/** Only a link_token link is verification; an inferred one never is. */
export function isVerifiedLink(link: Link | null): boolean {
  return link !== null && link.method === 'link_token';
}

/**
 * Links a batch of fills in order (oldest first), as a sync does: each link made here counts for
 * the next fills, so a decision inferred for one order is not inferred again for another.
 * `candidates` are not modified.
 */
export function linkFills(input: {
  agent: string;
  fills: readonly BrokerFill[];
  decisionByToken: (token: string) => LinkableDecision | null;
  candidates: readonly LinkableDecision[];
}): (Link | null)[] {
  const linked = new Map<string, string[]>();
  for (const d of input.candidates) linked.set(d.id, [...(d.linkedOrderKeys ?? [])]);
  const candidates = input.candidates.map((d) => ({ ...d, linkedOrderKeys: linked.get(d.id) as string[] }));
  return input.fills.map((fill) => {
    const token = linkTokenOf(fill);
    const link = decideLink({ agent: input.agent, fill, tokenDecision: token === null ? null : input.decisionByToken(token), candidates });
    if (link !== null) {
      const keys = linked.get(link.decision_id);
      const key = orderKey(fill);
      if (keys && !keys.includes(key)) keys.push(key);
    }
    return link;
  });
}
