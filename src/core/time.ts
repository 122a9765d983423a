// Timestamps of canon_v1: RFC 3339 date-times (occurred_at) and the service's recorded_at format.
// It owns calendar validation and exact instant arithmetic without Date parsing quirks
// (Date.parse accepts non-RFC forms and maps years 0..99 to 19xx).

const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?([Zz]|([+-])(\d{2}):(\d{2}))$/;
const RECORDED_AT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** `YYYY-MM-DDTHH:MM:SS.sssZ`, as a JSON-schema `pattern`. */
export const RECORDED_AT_PATTERN = '^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3}Z$';

export type Rfc3339Result =
  | { ok: true; epochMs: number; subMillisecond: boolean }
  | { ok: false; reason: 'format' | 'invalid_date' };

/** Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil). */
export function daysFromCivil(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yoe = y - era * 400;
  const doy = Math.floor((153 * (month + (month > 2 ? -3 : 9)) + 2) / 5) + day - 1;
  const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
  return era * 146097 + doe - 719468;
}

/** The proleptic Gregorian date of a day number (days since 1970-01-01), the inverse of daysFromCivil. */
export function civilFromDays(days: number): { year: number; month: number; day: number } {
  const z = days + 719468;
  const era = Math.floor(z / 146097);
  const doe = z - era * 146097;
  const yoe = Math.floor((doe - Math.floor(doe / 1460) + Math.floor(doe / 36524) - Math.floor(doe / 146096)) / 365);
  const doy = doe - (365 * yoe + Math.floor(yoe / 4) - Math.floor(yoe / 100));
  const mp = Math.floor((5 * doy + 2) / 153);
  const month = mp < 10 ? mp + 3 : mp - 9;
  return { year: yoe + era * 400 + (month <= 2 ? 1 : 0), month, day: doy - Math.floor((153 * mp + 2) / 5) + 1 };
}

export function daysInMonth(year: number, month: number): number {
  if (month === 2) return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0 ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}

/**
 * Parses an RFC 3339 `date-time` (offset required: `Z` or `±hh:mm`; `T`/`Z` in either case as
 * RFC 3339 allows). Rejects impossible dates and times. A leap second (`:60`) is accepted only
 * at 23:59 UTC, as RFC 3339 §5.7 describes. `epochMs` is floor milliseconds since the epoch;
 * `subMillisecond` tells whether digits beyond the millisecond are non-zero.
 */
export function parseRfc3339(s: string): Rfc3339Result {
  if (typeof s !== 'string') return { ok: false, reason: 'format' };
  const m = RFC3339.exec(s);
  if (!m) return { ok: false, reason: 'format' };
  const year = Number(m[1]);
  const month = Number(m[2]);
  const day = Number(m[3]);
  const hour = Number(m[4]);
  const minute = Number(m[5]);
  const second = Number(m[6]);
  const frac = m[7] ?? '';
  let offsetMinutes = 0;
  if (m[9] !== undefined) {
    const oh = Number(m[10]);
    const om = Number(m[11]);
    if (oh > 23 || om > 59) return { ok: false, reason: 'invalid_date' };
    offsetMinutes = (m[9] === '-' ? -1 : 1) * (oh * 60 + om);
  }
  if (month < 1 || month > 12) return { ok: false, reason: 'invalid_date' };
  if (day < 1 || day > daysInMonth(year, month)) return { ok: false, reason: 'invalid_date' };
  if (hour > 23 || minute > 59 || second > 60) return { ok: false, reason: 'invalid_date' };
  if (second === 60) {
    const utcMinuteOfDay = (((hour * 60 + minute - offsetMinutes) % 1440) + 1440) % 1440;
    if (utcMinuteOfDay !== 23 * 60 + 59) return { ok: false, reason: 'invalid_date' };
  }
  const ms = Number((frac + '000').slice(0, 3));
  const subMillisecond = /[1-9]/.test(frac.slice(3));
  const epochMs =
    daysFromCivil(year, month, day) * 86_400_000 +
    ((hour * 60 + minute - offsetMinutes) * 60 + second) * 1000 +
    ms;
  return { ok: true, epochMs, subMillisecond };
}

/** True for a valid `YYYY-MM-DDTHH:MM:SS.sssZ` (the chain's recorded_at format). */
export function isRecordedAt(s: string): boolean {
  if (typeof s !== 'string' || !RECORDED_AT.test(s)) return false;
  const r = parseRfc3339(s);
  return r.ok && s.slice(17, 19) !== '60';
}
