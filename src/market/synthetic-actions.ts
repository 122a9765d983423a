// The synthetic model's corporate actions: a deterministic schedule per stock symbol and year, and
// how each scheduled action becomes a CorporateAction once the walk (synthetic.ts) reaches it.
// Owns the schedule; the walk owns the prices (an action changes the close before its ex-date into
// the ex-date's open: a split divides it by new/old, a stock dividend by 1 + rate, a cash dividend
// takes its amount off). At most one action a day, on weekdays; none for crypto.
//
// Schedule of year Y, with w_i the big-endian uint32 words of SHA-256("<seed>\n<symbol>\nactions\n<Y>")
// and v_i those of SHA-256("<seed>\n<symbol>\ndividends"), "day D of month M" moved to the next
// weekday not taken by an earlier action of the list:
// - cash dividends, when v0 mod 3 ≠ 0: quarterly in months m, m+3, m+6, m+9 (m = 1 + v1 mod 3) on day
//   1 + v2 mod 20, each of round(previous close × y / 4, cents), y = (50 + v3 mod 350) / 10,000 a year;
//   when w0 mod 12 = 0 also a special one of round(previous close × y, cents), 7 days after the last;
// - a split, when w1 mod 6 = 0, on day 1 + w3 mod 25 of month 1 + w2 mod 12: reverse 1-for-r
//   (r = 2, 5, 10 by w5 mod 3) when w4 mod 3 = 0, else forward r-for-1 (r = 2, 3, 4, 10 by w5 mod 4);
// - a 5 % stock dividend, when w6 mod 20 = 0, on day 15 of month 1 + w7 mod 12.
// Dates: a split's process date is its ex-date, its payable date the weekday before (FINRA 11140:
// for a forward split the ex-date follows the payable date), its record date a week before; a
// dividend's record date is its ex-date (T+1 settlement; the next weekday before 2024-05-28), a cash
// dividend is payable 14 to 27 days later and processed then (as Alpaca dates them), a stock
// dividend payable 10 days later and processed on its ex-date.

import { Decimal } from 'decimal.js';
import { canonicalJson } from '../core/canon.ts';
import { daysFromCivil } from '../core/time.ts';
import { sha256Hex } from '../core/sha256.ts';
import { dateOfDay, isWeekday } from '../method/perf/calendar.ts';
import type { CorporateAction } from './port.ts';

export type ScheduledAction =
  | { type: 'forward_split' | 'reverse_split'; day: number; oldRate: string; newRate: string }
  | { type: 'cash_dividend'; day: number; yieldFraction: string; special: boolean; payLagDays: number }
  | { type: 'stock_dividend'; day: number; rate: string };

const Cents = Decimal.clone({ precision: 40, rounding: Decimal.ROUND_HALF_EVEN });
const T_PLUS_1 = daysFromCivil(2024, 5, 28);

function words(text: string): number[] {
  const hex = sha256Hex(text);
  return Array.from({ length: 8 }, (_, i) => parseInt(hex.slice(i * 8, i * 8 + 8), 16));
}

/** The first weekday on or after `day`. */
function weekdayFrom(day: number): number {
  let d = day;
  while (!isWeekday(d)) d++;
  return d;
}

function weekdayBefore(day: number): number {
  let d = day - 1;
  while (!isWeekday(d)) d--;
  return d;
}

/** The actions of `symbol` (a stock) in `year`, by day. */
export function scheduleOf(seed: string, symbol: string, year: number): ScheduledAction[] {
  const w = words(`${seed}\n${symbol}\nactions\n${year}`) as [number, number, number, number, number, number, number, number];
  const v = words(`${seed}\n${symbol}\ndividends`) as [number, number, number, number];
  const taken = new Set<number>();
  const placeDay = (day: number): number => {
    let d = weekdayFrom(day);
    while (taken.has(d)) d = weekdayFrom(d + 1);
    taken.add(d);
    return d;
  };
  const place = (month: number, dayOfMonth: number) => placeDay(daysFromCivil(year, month, dayOfMonth));
  const out: ScheduledAction[] = [];
  if (v[0] % 3 !== 0) {
    const first = 1 + (v[1] % 3);
    const yearly = new Cents(50 + (v[3] % 350)).div(10_000);
    for (let q = 0; q < 4; q++) {
      out.push({ type: 'cash_dividend', day: place(first + 3 * q, 1 + (v[2] % 20)), yieldFraction: yearly.div(4).toString(), special: false, payLagDays: 14 + ((w[7] + q) % 14) });
    }
    if (w[0] % 12 === 0) {
      const day = placeDay(out[out.length - 1]!.day + 7);
      out.push({ type: 'cash_dividend', day, yieldFraction: yearly.toString(), special: true, payLagDays: 21 });
    }
  }
  if (w[1] % 6 === 0) {
    const day = place(1 + (w[2] % 12), 1 + (w[3] % 25));
    if (w[4] % 3 === 0) out.push({ type: 'reverse_split', day, oldRate: String([2, 5, 10][w[5] % 3]), newRate: '1' });
    else out.push({ type: 'forward_split', day, oldRate: '1', newRate: String([2, 3, 4, 10][w[5] % 4]) });
  }
  if (w[6] % 20 === 0) out.push({ type: 'stock_dividend', day: place(1 + (w[7] % 12), 15), rate: '0.05' });
  return out.filter((a) => Number(dateOfDay(a.day).slice(0, 4)) === year).sort((a, b) => a.day - b.day);
}

/**
 * The ex-date's open from the close before it, and the action as its provider would state it.
 * `previousClose` is the raw close of the trading day before the ex-date.
 */
export function applyAction(seed: string, symbol: string, s: ScheduledAction, previousClose: string): { open: Decimal; action: CorporateAction } {
  const prev = new Cents(previousClose);
  const ex = dateOfDay(s.day);
  const recordDay = s.day >= T_PLUS_1 ? s.day : weekdayFrom(s.day + 1);
  switch (s.type) {
    case 'forward_split':
    case 'reverse_split':
      return {
        open: prev.times(s.oldRate).div(s.newRate),
        action: actionOf(seed, symbol, s.type, ex, {
          old_rate: s.oldRate, new_rate: s.newRate, process_date: ex, payable_date: dateOfDay(weekdayBefore(s.day)), record_date: dateOfDay(weekdayBefore(s.day - 6)),
        }),
      };
    case 'stock_dividend':
      return {
        open: prev.div(new Cents(1).plus(s.rate)),
        action: actionOf(seed, symbol, s.type, ex, { rate: s.rate, process_date: ex, payable_date: dateOfDay(weekdayFrom(s.day + 10)), record_date: dateOfDay(recordDay) }),
      };
    case 'cash_dividend': {
      const rate = Cents.max(prev.times(s.yieldFraction).toDecimalPlaces(2), '0.01');
      const payable = dateOfDay(weekdayFrom(s.day + s.payLagDays));
      return {
        open: Cents.max(prev.minus(rate), '0.01'),
        action: actionOf(seed, symbol, s.type, ex, {
          rate: rate.toFixed(), special: s.special, foreign: false, process_date: payable, payable_date: payable, record_date: dateOfDay(recordDay),
        }),
      };
    }
  }
}

/** A UUID-shaped id: the first 128 bits of SHA-256("<seed>\n<symbol>\n<type>\n<ex_date>"). */
export function syntheticActionId(seed: string, symbol: string, type: string, exDate: string): string {
  const h = sha256Hex(`${seed}\n${symbol}\n${type}\n${exDate}`);
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

type Members = { old_rate?: string; new_rate?: string; rate?: string; special?: boolean; foreign?: boolean; process_date: string; payable_date: string; record_date: string };

function actionOf(seed: string, symbol: string, type: CorporateAction['type'], exDate: string, m: Members): CorporateAction {
  const id = syntheticActionId(seed, symbol, type, exDate);
  return {
    provider_id: id,
    source: 'synthetic',
    type,
    symbol,
    ex_date: exDate,
    payable_date: m.payable_date,
    process_date: m.process_date,
    record_date: m.record_date,
    old_rate: m.old_rate ?? null,
    new_rate: m.new_rate ?? null,
    rate: m.rate ?? null,
    special: m.special ?? null,
    raw: canonicalJson({ id, symbol, ex_date: exDate, ...m }),
  };
}
