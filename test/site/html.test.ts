// The site's one escaping helper: every interpolated value is escaped, hostile strings included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, html, jsonScript, trusted } from '../../src/site/browser/html.ts';
import { siteHref, slug, readmeSections } from '../../src/site/doc-pages.ts';
import { corporateEventsList, metricsTable, outcomeText, reportsFromProfile } from '../../src/site/browser/performance.ts';

const HOSTILE = [
  '<script>alert(1)</script>',
  '"><img src=x onerror=alert(1)>',
  "' onmouseover='alert(1)",
  '</textarea></title></style><svg onload=alert(1)>',
  '&lt;already escaped&gt; & ampersand',
  'javascript:alert(1)',
];

test('text and attribute values are escaped: no tag, no quote, no raw ampersand survives', () => {
  for (const s of HOSTILE) {
    const out = html`<p title="${s}" data-x='${s}'>${s}</p>`.text;
    assert.ok(!/<(script|img|svg)/i.test(out), out);
    assert.equal(/^<p title="([^"]*)" data-x='([^']*)'>/.exec(out)?.[1], escapeHtml(s), `the attribute holds the whole value: ${out}`);
    assert.equal((out.match(/</g) ?? []).length, 2, `only the template's own tags: ${out}`);
    assert.ok(!/&(?!amp;|lt;|gt;|quot;|#39;)/.test(out), `every ampersand is an entity: ${out}`);
  }
  assert.equal(escapeHtml(`<>&"'`), '&lt;&gt;&amp;&quot;&#39;');
});

test('nested Html is kept, arrays are joined, null, undefined and false vanish, numbers are text', () => {
  const inner = html`<b>${'<i>'}</b>`;
  assert.equal(html`<p>${inner}${[html`<br>`, '<x>']}${null}${undefined}${false}${3}</p>`.text, '<p><b>&lt;i&gt;</b><br>&lt;x&gt;3</p>');
});

test('a plain object that looks like Html is escaped as text, not trusted', () => {
  const forged = { text: '<script>alert(1)</script>' } as unknown as string;
  assert.ok(!html`${forged}`.text.includes('<script>'));
  assert.equal(trusted('<em>ours</em>').text, '<em>ours</em>');
});

test('JSON for a script block cannot close it', () => {
  const out = jsonScript({ a: '</script><script>alert(1)</script>', b: '\u2028' }).text;
  assert.ok(!out.includes('</script>'));
  assert.deepEqual(JSON.parse(out), { a: '</script><script>alert(1)</script>', b: '\u2028' });
});

test('docs links: between docs become site pages, other repository files become text', () => {
  const names = new Set(['signing', 'log']);
  assert.equal(siteHref('docs/signing.md', names), '/docs/signing');
  assert.equal(siteHref('log.md#checkpoints', names), '/docs/log#checkpoints');
  assert.equal(siteHref('../README.md#quick-start', names), '/docs#quick-start');
  assert.equal(siteHref('examples/sign-and-post.mjs', names), null);
  assert.equal(siteHref('nothere.md', names), null);
  assert.equal(siteHref('https://example.test/x', names), 'https://example.test/x');
  assert.equal(siteHref('images/agent-page.png', names), '/docs/images/agent-page.png');
  assert.equal(slug('Quick start: record a decision'), 'quick-start-record-a-decision');
  assert.deepEqual(readmeSections('# T\n## Quick start\na\n## Other\nb\n## Sign decisions\nc\n', ['Quick start', 'Sign decisions', 'Missing']), ['## Quick start\na\n', '## Sign decisions\nc\n']);
});

test('metrics: values formatted, a dash with its reason below minimum history, hostile caveats escaped', () => {
  const report = {
    portfolio: 'model',
    metrics: {
      days: 40,
      cumulative_return: { value: '0.0421' },
      volatility: { value: null, reason: 'needs 252 daily returns, has 27' },
      sharpe: { value: '1.234' },
    },
    benchmark: { symbol: 'SPY', metrics: { cumulative_return: { value: '-0.01' } } },
    caveats: ['<script>alert(1)</script>'],
  };
  const out = metricsTable(report, 'model metrics').text;
  assert.match(out, /\+4\.21 %/);
  assert.match(out, /−1\.00 %/);
  assert.match(out, /1\.23/);
  assert.match(out, /—.*needs 252 daily returns, has 27/s);
  assert.ok(!out.includes('<script>'));
  const outcome = outcomeText({ record_id: 'dec_1', outcomes: { '1d': { date: '2026-03-16', return: '0.004000', hit: true, reason: null }, '5d': { date: null, return: null, hit: null, reason: 'not yet' } } }).text;
  assert.match(outcome, /1 day: \+0\.40 % \(right\)/);
  assert.match(outcome, /5 days: .*not yet/);
  assert.equal(reportsFromProfile({ performance: null, portfolios: [] }).size, 0);
  assert.deepEqual([...reportsFromProfile({ performance: { model: report, broker: { metrics: {} } } }).keys()], ['model', 'broker']);
  assert.deepEqual([...reportsFromProfile({ performance: { ...report, portfolio: 'broker' } }).keys()], ['broker']);
});

test('corporate actions under the chart: one line each with date, symbol, type, terms, quantity and cash before and after; nothing without events', () => {
  const base = { provider_id: 'syn-<1>', rate: null, amount: null, cash_before: '100', cash_after: '100' };
  const report = {
    portfolio: 'model',
    corporate_actions: {
      events: [
        { ...base, date: '2024-01-24', phase: 'ex', symbol: 'META', type: 'forward_split', ratio: '3:1', quantity_before: '10', quantity_after: '30' },
        { ...base, date: '2024-02-01', phase: 'ex', symbol: 'KO', type: 'cash_dividend', ratio: null, rate: '0.46', amount: '4.6', quantity_before: '10', quantity_after: '10' },
        { ...base, date: '2024-02-20', phase: 'payable', symbol: 'KO', type: 'cash_dividend', ratio: null, rate: '0.46', amount: '4.6', quantity_before: '10', quantity_after: '10', cash_after: '104.6' },
      ],
    },
  };
  const list = corporateEventsList(report, 'model');
  assert.notEqual(list, '');
  const out = (list as Exclude<typeof list, ''>).text;
  assert.match(out, /3 corporate action events applied/);
  assert.match(out, /<time datetime="2024-01-24">2024-01-24<\/time> META split 3:1; quantity 10 → 30 <span class="muted">\(syn-&lt;1&gt;\)<\/span>/);
  assert.match(out, /KO cash dividend 0\.46 a share; 4\.6 accrued/);
  assert.match(out, /KO cash dividend 0\.46 a share, paid; cash 100 → 104\.6/);
  assert.equal(corporateEventsList({ corporate_actions: { events: [] } }, 'model'), '');
  assert.equal(corporateEventsList({}, 'model'), '');
});
