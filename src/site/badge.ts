// The site wing: the public face of the ledger at {site_url}.
// This file owns what a badge (/badge/<handle>.svg, interface endpoint 13, rule 9) says: its
// label, message and colour from plain facts about an agent, and the SVG drawn by badge-maker
// (shields.io's own renderer). Pure: the facts are gathered by badges.ts. The rules are written
// out for users in docs/badges.md.
import { Decimal } from 'decimal.js';
import { makeBadge } from 'badge-maker';

export const BADGE_STYLES = ['return', 'verified', 'record'] as const;
export type BadgeStyle = (typeof BADGE_STYLES)[number];
/** The badge shown when `style` is omitted: the agent's record (rule 9). */
export const DEFAULT_BADGE_STYLE: BadgeStyle = 'record';

export const BADGE_LABELS: Record<BadgeStyle, string> = { return: 'return', verified: 'verified', record: 'ledger' };

/** Shields' named colours (conventions 4.2), plus amber for synthetic or demo inputs. */
export const COLOURS = {
  brightgreen: '#4c1',
  yellowgreen: '#a4a61d',
  red: '#e05d44',
  blue: '#007ec6',
  lightgrey: '#9f9f9f',
  amber: '#ffbf00',
} as const;

/** Shown in place of a number the agent's history cannot support yet. */
export const DASH = '—';

/** A `verified` badge is bright green from this share up, yellow-green from FAIR_SHARE, blue below. */
export const GOOD_SHARE = 90;
export const FAIR_SHARE = 50;

/**
 * What the `return` badge shows, taken from the agent's stored performance report: never a live
 * call to a market provider, so a badge never waits on one.
 */
export type PerformanceSummary = {
  /** Return since the first record, a ratio as decimal text ("0.1234" is +12.34 %); null below minimum history. */
  cumulative_return: string | null;
  /** The benchmark's return over the same days, a ratio; null when not known. */
  benchmark_return: string | null;
  /** The benchmark's symbol (SPY). */
  benchmark: string | null;
  /** The benchmark's basis, said on the badge: dividends reinvested (total return), not (price return), or not all known (partial return). */
  benchmark_basis: 'price_return' | 'total_return' | 'partial_return';
  /** True when any price behind the figures came from the synthetic provider. */
  synthetic: boolean;
  /** Why cumulative_return is null. */
  reason: string | null;
};

export type Caution = 'synthetic' | 'demo' | null;

export type BadgeFacts =
  | { style: 'return'; caution: Caution; performance: PerformanceSummary | null }
  | { style: 'verified'; caution: Caution; decisions: number; signed: number; executions: number; linkToken: number }
  | { style: 'record'; caution: Caution; records: number; days: number | null };

export type BadgeText = { label: string; message: string; color: string };

export function unknownAgentText(style: BadgeStyle): BadgeText {
  return { label: BADGE_LABELS[style], message: 'unknown agent', color: COLOURS.lightgrey };
}

/** The performance wing could not answer: said as such, never as a dash (a dash means too little history). */
export function unavailableText(style: BadgeStyle): BadgeText {
  return { label: BADGE_LABELS[style], message: 'unavailable', color: COLOURS.lightgrey };
}

export function badgeText(facts: BadgeFacts): BadgeText {
  const { message, color } = facts.style === 'return' ? returnText(facts.performance)
    : facts.style === 'verified' ? verifiedText(facts)
      : recordText(facts);
  if (facts.caution === null) return { label: BADGE_LABELS[facts.style], message, color };
  return { label: BADGE_LABELS[facts.style], message: `${message} · ${facts.caution}`, color: COLOURS.amber };
}

type Said = { message: string; color: string };

const BASIS_WORDS: Record<PerformanceSummary['benchmark_basis'], string> = { total_return: 'total return', price_return: 'price return', partial_return: 'partial return' };

function returnText(p: PerformanceSummary | null): Said {
  if (p === null || p.cumulative_return === null) return { message: DASH, color: COLOURS.lightgrey };
  const own = percent(p.cumulative_return);
  if (p.benchmark_return === null) return { message: own, color: COLOURS.blue };
  const beat = new Decimal(p.cumulative_return).gte(p.benchmark_return);
  const basis = BASIS_WORDS[p.benchmark_basis];
  return { message: `${own} vs ${p.benchmark ?? 'benchmark'} ${basis} ${percent(p.benchmark_return)}`, color: beat ? COLOURS.brightgreen : COLOURS.red };
}

function verifiedText(f: Extract<BadgeFacts, { style: 'verified' }>): Said {
  const linked = share(f.linkToken, f.executions);
  const signed = share(f.signed, f.decisions);
  if (linked === null && signed === null) return { message: DASH, color: COLOURS.lightgrey };
  const message = `linked ${linked === null ? DASH : `${linked}%`} · signed ${signed === null ? DASH : `${signed}%`}`;
  const lowest = Math.min(linked ?? 100, signed ?? 100);
  const color = lowest >= GOOD_SHARE ? COLOURS.brightgreen : lowest >= FAIR_SHARE ? COLOURS.yellowgreen : COLOURS.blue;
  return { message, color };
}

function recordText(f: Extract<BadgeFacts, { style: 'record' }>): Said {
  if (f.records === 0 || f.days === null) return { message: DASH, color: COLOURS.lightgrey };
  return { message: `${plural(f.records, 'record')} · ${plural(f.days, 'day')}`, color: COLOURS.blue };
}

/** A ratio as a signed percentage with one decimal: "0.12345" is "+12.3%". */
export function percent(ratio: string): string {
  const text = new Decimal(ratio).times(100).toFixed(1);
  if (/^-0\.0$/.test(text) || text === '0.0') return '0.0%';
  return `${text.startsWith('-') ? '' : '+'}${text}%`;
}

/** n of total as a whole percentage, rounded down (100% means every one); null when total is 0. */
export function share(n: number, total: number): number | null {
  if (total <= 0) return null;
  return Math.floor((100 * Math.min(n, total)) / total);
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

export function renderBadge(text: BadgeText, style: BadgeStyle): string {
  return makeBadge({ label: text.label, message: text.message, color: text.color, style: 'flat', idSuffix: style });
}
