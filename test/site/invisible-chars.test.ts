// Issue 24, finding 9: bidi controls and zero-width characters in agent text (display name,
// thesis, symbol, time_horizon, metadata) are shown on the site's pages as a visible ⟨U+XXXX⟩, in a
// marked span with the character's name, as code hosts do; never as they are (they would reorder
// or hide what the page says). HTML escaping holds around them, and the stored bytes do not change.
// The renderer alone, then the pages over HTTP on both stores, then the agent page in a browser.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { AddressInfo } from 'node:net';
import { chromium, type Browser } from 'playwright-core';
import { escapeHtml, html, jsonScript } from '../../src/site/browser/html.ts';
import { closeTestApp, postDecision, testApp, type TestApp } from '../support/app.ts';
import { forEachStore, runSql } from '../support/stores.ts';
import { ARGS, CHROMIUM, chromiumSkip } from './browser.ts';

const RLO = '\u202E';
const INVISIBLES = ['\u202A', '\u202B', '\u202C', '\u202D', '\u202E', '\u2066', '\u2067', '\u2068', '\u2069', '\u200B', '\u200C', '\u200D', '\u200E', '\u200F',
  '\u2028', '\u2029', '\uFEFF', '\u061C', '\u2060', '\u00AD', '\u0000', '\u001B', '\u0085', '\u{E0041}'];
const RAW = new RegExp(`[${INVISIBLES.join('')}]`, 'u');
const hex = (c: string) => c.codePointAt(0)!.toString(16).toUpperCase().padStart(4, '0');

test('in element text each invisible character is a marked ⟨U+XXXX⟩ with its name; escaping holds around it', () => {
  for (const c of INVISIBLES) {
    const out = html`<p>a${`<b>${c}"x"`}</p>`.text;
    assert.ok(!RAW.test(out), `U+${hex(c)} is not in the page as it is`);
    assert.ok(out.includes(`<span class='invisible-char' title='U+${hex(c)}`), out);
    assert.ok(out.includes(`>⟨U+${hex(c)}⟩</span>`), out);
    assert.ok(out.startsWith('<p>a&lt;b&gt;<span') && out.endsWith('&quot;x&quot;</p>'), out);
  }
  assert.equal(html`<p>${`Bot ${RLO}gnp.exe`}</p>`.text, `<p>Bot <span class='invisible-char' title='U+202E RIGHT-TO-LEFT OVERRIDE'>⟨U+202E⟩</span>gnp.exe</p>`);
  assert.equal(html`<p>${'plain, <safe> & "sound"'}</p>`.text, `<p>${escapeHtml('plain, <safe> & "sound"')}</p>`, 'text without them is as before');
  assert.equal(html`<p>${'tab\tand\nnew line\r\n'}</p>`.text, '<p>tab\tand\nnew line\r\n</p>', 'TAB, LF and CR are layout, not hidden');
});

test('inside a tag, a fragment\'s attribute, <title> or <textarea> the marker is plain text: no markup where none can go', () => {
  const v = `x${RLO}"y`;
  const plain = 'x⟨U+202E⟩&quot;y';
  assert.equal(html`<a title="${v}" data-x='${v}'>t</a>`.text, `<a title="${plain}" data-x='${plain}'>t</a>`);
  assert.equal(html` title="${v}"`.text, ` title="${plain}"`, 'an attribute a fragment opens');
  assert.equal(html`<span${html` title='${v}'`}>${v}</span>`.text.split('>')[0], `<span title='${plain}'`);
  assert.equal(html`<title>${v} · site</title>`.text, `<title>${plain} · site</title>`);
  assert.equal(html`<textarea>${v}</textarea>`.text, `<textarea>${plain}</textarea>`);
  assert.match(html`<title>t</title><p>${v}</p>`.text, /<p>x<span class='invisible-char'/, 'after a closed title, element text again');
  assert.equal(jsonScript({ s: v }).text, JSON.stringify({ s: v }).replace(/</g, '\\u003c'), 'data for scripts keeps the characters');
});

const AGENT_TEXT = {
  displayName: `Alpha ${RLO}tob\u202C\u200B<i>x</i>`,
  thesis: `Buy: \u2067earnings\u2069 beat\u200B. ${RLO}"sell"\u202C & <b>hold</b>\u2028next\uFEFF`,
  symbol: `AB\u200BC`,
  time_horizon: `5 td\u200F`,
  metadata: { note: `n\u2066o\u2069te` },
};

await forEachStore('invisible characters on the site', (kind) => {
  let t: TestApp;
  let handle: string;
  let id: string;
  let browser: Browser | undefined;
  let base = '';
  const skip = chromiumSkip();

  before(async () => {
    t = await testApp(await kind.open());
    handle = `bidi-${kind.name}-${process.pid}`;
    // A display name with bidi controls is refused since issue 41 (docs/site.md); one stored before
    // that is kept, and it is what the site must show marked: the test stores it as it was.
    const created = await t.operators.createAgent({ handle, displayName: 'Alpha' });
    assert.ok(created.ok);
    await runSql(t.store, 'UPDATE agents SET display_name = $1 WHERE handle = $2', [AGENT_TEXT.displayName, handle]);
    const { displayName: _d, ...fields } = AGENT_TEXT;
    const res = await postDecision(t, created.value.apiKey.secret, { ...fields, action: 'BUY' });
    assert.equal(res.statusCode, 201, res.body);
    id = res.json().id;
  });
  after(async () => {
    await browser?.close();
    await closeTestApp(t, kind);
  });

  const page = async (url: string) => {
    const res = await t.app.inject({ method: 'GET', url, headers: { accept: 'text/html' } });
    assert.equal(res.statusCode, 200, url);
    return res.body;
  };

  test('the agent page and the record page show every one of them, escaped, and hold none as it is', async () => {
    for (const url of [`/agents/${handle}`, `/records/${id}`]) {
      const body = await page(url);
      const outsideScripts = body.replace(/<script type="application\/json"[\s\S]*?<\/script>/g, '');
      assert.ok(!RAW.test(outsideScripts), `${url}: no invisible character as it is`);
      assert.ok(!body.includes('<i>x</i>') && !body.includes('<b>hold</b>'), `${url}: escaping holds`);
      assert.ok(body.includes(`<span class='invisible-char' title='U+200B ZERO WIDTH SPACE'>⟨U+200B⟩</span>`), url);
      assert.ok(body.includes(`AB<span class='invisible-char' title='U+200B ZERO WIDTH SPACE'>⟨U+200B⟩</span>C`), `${url}: the symbol`);
      assert.ok(body.includes(`5 td<span class='invisible-char' title='U+200F RIGHT-TO-LEFT MARK'>⟨U+200F⟩</span>`), `${url}: the time_horizon`);
      assert.ok(body.includes(`<span class='invisible-char' title='U+2067 RIGHT-TO-LEFT ISOLATE'>⟨U+2067⟩</span>earnings`), `${url}: the thesis`);
    }
    const agent = await page(`/agents/${handle}`);
    assert.match(agent, /<h1>Alpha <span class='invisible-char' title='U\+202E RIGHT-TO-LEFT OVERRIDE'>⟨U\+202E⟩<\/span>tob/, 'the display name');
    assert.match(agent, /<title>Alpha ⟨U\+202E⟩tob⟨U\+202C⟩⟨U\+200B⟩&lt;i&gt;x&lt;\/i&gt; \(/, 'the window title, plain');
    const record = await page(`/records/${id}`);
    assert.ok(record.includes('n<span class=\'invisible-char\' title=\'U+2066 LEFT-TO-RIGHT ISOLATE\'>⟨U+2066⟩</span>o'), 'metadata');
  });

  test('the stored bytes are unchanged: the API answers the text as recorded', async () => {
    const profile = (await t.app.inject({ url: `/v1/agents/${handle}` })).json();
    assert.equal(profile.display_name ?? profile.agent?.display_name, AGENT_TEXT.displayName);
    const proof = (await t.app.inject({ url: `/v1/proof/${id}` })).json();
    const content = typeof proof.record?.content === 'string' ? JSON.parse(proof.record.content) : (proof.content ?? proof.record?.content ?? proof.document);
    assert.equal(content.thesis, AGENT_TEXT.thesis);
    assert.equal(content.symbol, AGENT_TEXT.symbol);
    assert.equal(content.time_horizon, AGENT_TEXT.time_horizon);
  });

  describe('in a browser', { skip }, () => {
    test('the reader sees the markers, and an override reorders nothing after it', async () => {
      await t.app.listen({ port: 0, host: '127.0.0.1' });
      base = `http://127.0.0.1:${(t.app.server.address() as AddressInfo).port}`;
      browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: ARGS });
      const context = await browser.newContext();
      const tab = await context.newPage();
      await tab.goto(`${base}/agents/${handle}`, { waitUntil: 'load' });
      const heading = await tab.innerText('h1');
      assert.equal(heading, 'Alpha ⟨U+202E⟩tob⟨U+202C⟩⟨U+200B⟩<i>x</i>');
      assert.equal(await tab.title(), `Alpha ⟨U+202E⟩tob⟨U+202C⟩⟨U+200B⟩<i>x</i> (${handle}) · decision ledger`);
      const marks = await tab.$$eval('.invisible-char', (els) => els.map((e) => [e.textContent, e.getAttribute('title')]));
      assert.ok(marks.some(([text, title]) => text === '⟨U+202E⟩' && title === 'U+202E RIGHT-TO-LEFT OVERRIDE'), JSON.stringify(marks));
      const body = await tab.innerText('body');
      assert.ok(body.includes('⟨U+2067⟩earnings⟨U+2069⟩ beat⟨U+200B⟩.'), 'the thesis reads in order, markers included');
      assert.ok(!RAW.test(body));
      await context.close();
    });
  });
});
