// Trading-day calendar used by the synthetic model: US regular session 09:30-16:00 New York time
// on weekdays (exchange holidays are not modelled), crypto every day around the clock.
// It owns New York daylight-saving offsets and session boundaries, in plain UTC arithmetic.

import { civilFromDays, daysFromCivil } from '../../core/time.ts';

const DAY_MS = 86_400_000;

/** Day number (days since 1970-01-01) of an ISO date `YYYY-MM-DD`. */
export function dayNumber(date: string): number {
  return daysFromCivil(Number(date.slice(0, 4)), Number(date.slice(5, 7)), Number(date.slice(8, 10)));
}

/** The ISO date `YYYY-MM-DD` of a day number, years 0 to 9999 (plain arithmetic: it runs for every day a report values). */
export function dateOfDay(day: number): string {
  const { year, month, day: d } = civilFromDays(day);
  return `${String(year).padStart(4, '0')}-${month < 10 ? '0' : ''}${month}-${d < 10 ? '0' : ''}${d}`;
}

/** The ISO date `n` days after (before, when negative) `date`. */
export function plusDays(date: string, n: number): string {
  return dateOfDay(dayNumber(date) + n);
}

/** Monday to Friday. 1970-01-01 (day 0) was a Thursday. */
export function isWeekday(day: number): boolean {
  const weekday = (((day + 4) % 7) + 7) % 7; // 0 = Sunday
  return weekday >= 1 && weekday <= 5;
}

/** Day number of the n-th Sunday (n >= 1) of a month. */
function nthSunday(year: number, month: number, n: number): number {
  const first = daysFromCivil(year, month, 1);
  const weekday = (((first + 4) % 7) + 7) % 7;
  return first + ((7 - weekday) % 7) + 7 * (n - 1);
}

/**
 * New York's UTC offset in hours on a given day at the session (-4 in daylight time, -5 otherwise):
 * daylight time runs from the second Sunday of March to the first Sunday of November (rules since 2007).
 */
export function newYorkOffsetHours(day: number): number {
  const year = Number(dateOfDay(day).slice(0, 4));
  return day >= nthSunday(year, 3, 2) && day < nthSunday(year, 11, 1) ? -4 : -5;
}

/** UTC epoch milliseconds of the regular session's open and close on a weekday. */
export function stockSession(day: number): { open: number; close: number } {
  const offset = newYorkOffsetHours(day);
  const midnightUtc = day * DAY_MS - offset * 3_600_000;
  return { open: midnightUtc + 9.5 * 3_600_000, close: midnightUtc + 16 * 3_600_000 };
}

/** The New York calendar day of an instant. */
export function newYorkDay(epochMs: number): number {
  const utcDay = Math.floor(epochMs / DAY_MS);
  // The offset of the UTC day is right except within hours of the switch, where the session is shut anyway.
  return Math.floor((epochMs + newYorkOffsetHours(utcDay) * 3_600_000) / DAY_MS);
}

export { DAY_MS };
