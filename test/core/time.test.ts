// Day numbers and dates (src/core/time.ts, src/method/perf/calendar.ts): civilFromDays inverts
// daysFromCivil, and dateOfDay, plain arithmetic, writes what Date's ISO form writes.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import fc from 'fast-check';
import { civilFromDays, daysFromCivil } from '../../src/core/time.ts';
import { dateOfDay, dayNumber } from '../../src/method/perf/calendar.ts';

const DAY_MS = 86_400_000;
/** 0000-01-01 and 9999-12-31 as day numbers. */
const FIRST = daysFromCivil(0, 1, 1);
const LAST = daysFromCivil(9999, 12, 31);

test('civilFromDays inverts daysFromCivil over years 0 to 9999', () => {
  fc.assert(fc.property(fc.integer({ min: FIRST, max: LAST }), (days) => {
    const { year, month, day } = civilFromDays(days);
    assert.equal(daysFromCivil(year, month, day), days);
  }), { numRuns: 5000 });
});

test('dateOfDay is the ISO date Date gives, and dayNumber its inverse', () => {
  const check = (days: number) => {
    assert.equal(dateOfDay(days), new Date(days * DAY_MS).toISOString().slice(0, 10));
    assert.equal(dayNumber(dateOfDay(days)), days);
  };
  for (const days of [FIRST, -1, 0, 1, 59, 60, 11_016, 19_782, 20_513, LAST]) check(days);
  fc.assert(fc.property(fc.integer({ min: FIRST, max: LAST }), check), { numRuns: 5000 });
});
