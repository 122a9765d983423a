// What each badge says (site/badge.ts), from plain facts: every style, the dash below minimum
// history, amber for synthetic or demo inputs, the neutral unknown-agent badge, and SVG that an
// XML parser accepts with the text in its accessible name.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { modelPerformance } from '../../src/method/perf/perf.ts';
import type { DecisionInput } from '../../src/method/perf/portfolio.ts';
import {
  COLOURS, DASH, badgeText, percent, renderBadge, share, unavailableText, unknownAgentText, type BadgeFacts, type PerformanceSummary,
} from '../../src/site/badge.ts';
import { summaryOfReport } from '../../src/site/badges.ts';
import { parseSvg } from './svg.ts';

const summary = (over: Partial<PerformanceSummary> = {}): PerformanceSummary => ({
  cumulative_return: '0.123456', benchmark_return: '0.081', benchmark: 'SPY', benchmark_basis: 'total_return', synthetic: false, reason: null, ...over,
});

describe('the return badge', () => {
  it('shows the return since the first record against the benchmark, green when ahead, red when behind', () => {
    assert.deepEqual(badgeText({ style: 'return', caution: null, performance: summary() }),
      { label: 'return', message: '+12.3% vs SPY total return +8.1%', color: COLOURS.brightgreen });
    assert.deepEqual(badgeText({ style: 'return', caution: null, performance: summary({ cumulative_return: '-0.02', benchmark_return: '0.05' }) }),
      { label: 'return', message: '-2.0% vs SPY total return +5.0%', color: COLOURS.red });
  });

  it('says the benchmark\'s basis: total return, price return, or partial return (its corporate actions not all known)', () => {
    assert.equal(badgeText({ style: 'return', caution: null, performance: summary({ benchmark_basis: 'price_return' }) }).message, '+12.3% vs SPY price return +8.1%');
    assert.equal(badgeText({ style: 'return', caution: null, performance: summary({ benchmark_basis: 'partial_return' }) }).message, '+12.3% vs SPY partial return +8.1%');
  });

  it('shows the return alone, in blue, when the benchmark is not known', () => {
    assert.deepEqual(badgeText({ style: 'return', caution: null, performance: summary({ benchmark_return: null }) }),
      { label: 'return', message: '+12.3%', color: COLOURS.blue });
  });

  it('shows a grey dash without a performance, or below its minimum history', () => {
    const dash = { label: 'return', message: DASH, color: COLOURS.lightgrey };
    assert.deepEqual(badgeText({ style: 'return', caution: null, performance: null }), dash);
    assert.deepEqual(badgeText({ style: 'return', caution: null, performance: summary({ cumulative_return: null, reason: 'no valuation yet' }) }), dash);
  });

  it('is amber and says so when an input is synthetic', () => {
    const text = badgeText({ style: 'return', caution: 'synthetic', performance: summary({ synthetic: true }) });
    assert.deepEqual(text, { label: 'return', message: '+12.3% vs SPY total return +8.1% · synthetic', color: COLOURS.amber });
    assert.deepEqual(badgeText({ style: 'return', caution: 'demo', performance: null }), { label: 'return', message: `${DASH} · demo`, color: COLOURS.amber });
  });

  it('reads a perf_v1 report: its cumulative return, the benchmark\'s, and the synthetic mark', () => {
    const dates = ['2026-01-05', '2026-01-06'];
    const closes = (xs: string[]) => xs.map((close, i) => ({ date: dates[i]!, close }));
    const decisions: DecisionInput[] = [{ id: 'd1', recorded_at: '2026-01-05T15:00:00.000Z', symbol: 'AAA', action: 'BUY', target_allocation_pct: '100', price: '10' }];
    const report = modelPerformance({
      decisions, closes: { AAA: closes(['10', '11']) }, benchmark: { symbol: 'SPY', closes: closes(['500', '505']), inception_price: '500' }, synthetic: true,
    });
    const s = summaryOfReport(report);
    assert.equal(s.cumulative_return, report.metrics.cumulative_return.value);
    assert.equal(s.benchmark_return, report.benchmark.metrics?.cumulative_return.value);
    assert.deepEqual({ benchmark: s.benchmark, synthetic: s.synthetic, reason: s.reason }, { benchmark: 'SPY', synthetic: true, reason: null });
    assert.equal(badgeText({ style: 'return', caution: 'synthetic', performance: s }).message, '+10.0% vs SPY price return +1.0% · synthetic');

    const empty = summaryOfReport(modelPerformance({ decisions: [], closes: {}, benchmark: { symbol: 'SPY', closes: [] } }));
    assert.equal(empty.cumulative_return, null);
    assert.match(empty.reason ?? '', /no valuation yet/);
  });
});

describe('the verified badge', () => {
  const verified = (over: Partial<Extract<BadgeFacts, { style: 'verified' }>>): BadgeFacts =>
    ({ style: 'verified', caution: null, decisions: 10, signed: 10, executions: 20, linkToken: 20, ...over });

  it('shows the share of executions linked by link token and of decisions signed, rounded down', () => {
    assert.deepEqual(badgeText(verified({})), { label: 'verified', message: 'linked 100% · signed 100%', color: COLOURS.brightgreen });
    assert.equal(badgeText(verified({ executions: 1000, linkToken: 999 })).message, 'linked 99% · signed 100%', '99.9% is not 100%');
    assert.deepEqual(badgeText(verified({ signed: 6 })), { label: 'verified', message: 'linked 100% · signed 60%', color: COLOURS.yellowgreen });
    assert.deepEqual(badgeText(verified({ linkToken: 3 })), { label: 'verified', message: 'linked 15% · signed 100%', color: COLOURS.blue });
  });

  it('shows a dash for a share with nothing to count, and a grey dash alone when both have nothing', () => {
    assert.equal(badgeText(verified({ executions: 0, linkToken: 0 })).message, `linked ${DASH} · signed 100%`);
    assert.equal(badgeText(verified({ decisions: 0, signed: 0 })).message, `linked 100% · signed ${DASH}`);
    assert.deepEqual(badgeText(verified({ decisions: 0, signed: 0, executions: 0, linkToken: 0 })), { label: 'verified', message: DASH, color: COLOURS.lightgrey });
  });

  it('is amber for a demo agent', () => {
    assert.deepEqual(badgeText(verified({ caution: 'demo' })), { label: 'verified', message: 'linked 100% · signed 100% · demo', color: COLOURS.amber });
  });
});

describe('the record badge', () => {
  it('shows records and whole days on the ledger', () => {
    assert.deepEqual(badgeText({ style: 'record', caution: null, records: 1234, days: 37 }), { label: 'ledger', message: '1,234 records · 37 days', color: COLOURS.blue });
    assert.equal(badgeText({ style: 'record', caution: null, records: 1, days: 1 }).message, '1 record · 1 day');
    assert.equal(badgeText({ style: 'record', caution: null, records: 2, days: 0 }).message, '2 records · 0 days');
  });

  it('shows a dash with no record, amber for a demo agent', () => {
    assert.deepEqual(badgeText({ style: 'record', caution: null, records: 0, days: null }), { label: 'ledger', message: DASH, color: COLOURS.lightgrey });
    assert.deepEqual(badgeText({ style: 'record', caution: 'demo', records: 3, days: 2 }), { label: 'ledger', message: '3 records · 2 days · demo', color: COLOURS.amber });
  });
});

describe('numbers and drawing', () => {
  it('formats ratios as signed percentages and shares as whole, rounded-down percentages', () => {
    assert.deepEqual(['0.123456', '-0.0004', '0', '0.00049', '-0.5', '2'].map(percent), ['+12.3%', '0.0%', '0.0%', '0.0%', '-50.0%', '+200.0%']);
    assert.deepEqual([share(0, 0), share(0, 5), share(5, 5), share(2, 3), share(7, 5)], [null, 0, 100, 66, 100]);
  });

  it('draws SVG that parses, with the text as its accessible name and the colour as given', () => {
    for (const [text, style] of [
      [unknownAgentText('return'), 'return'], [unavailableText('verified'), 'verified'],
      [badgeText({ style: 'record', caution: 'demo', records: 3, days: 2 }), 'record'],
    ] as const) {
      const svg = parseSvg(renderBadge(text, style));
      assert.equal(svg.label, `${text.label}: ${text.message}`);
      assert.ok(svg.fills.includes(text.color), `${text.color} in ${svg.fills.join(' ')}`);
    }
  });

  it('the unknown-agent badge is neutral (grey), never red', () => {
    assert.deepEqual(unknownAgentText('record'), { label: 'ledger', message: 'unknown agent', color: COLOURS.lightgrey });
  });
});
