// The site's one escaping helper: every interpolated value is escaped, hostile strings included.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { escapeHtml, html, jsonScript, trusted } from '../../src/site/html.ts';
import { siteHref, slug, readmeSections } from '../../src/site/doc-pages.ts';
import { metricsTable, outcomeText, reportsFromProfile } from '../../src/site/pages/performance.ts';

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
