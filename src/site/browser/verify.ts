/// <reference lib="dom" />
// The record page's **Verify in this browser** button (bundled by scripts/build.mjs into
// dist/site/assets/verify.js): fetches the proof bundle and the log's key, runs checkProof, and
// lists which checks passed. Results are written with the site's escaping helper.
import { html } from '../html.ts';
import { checkProof, type ProofVerdict } from './proof-check.ts';

function render(v: ProofVerdict) {
  return html`<p class="verdict" data-verdict="${v.ok ? 'pass' : 'fail'}">${v.ok ? '✓ Verified in this browser: every check passed.' : '✗ Verification failed: this record does not match its proof.'}</p>
<ul class="checks">${v.checks.map((c) => html`<li class="${c.ok === true ? 'pass' : c.ok === false ? 'fail' : 'note'}" data-check="${c.name}" data-ok="${String(c.ok)}">
<strong>${c.ok === true ? '✓' : c.ok === false ? '✗' : '–'} ${c.label}</strong>: ${c.detail}</li>`)}</ul>
<p class="note">SHA-256: ${v.engines.sha256}. Ed25519: ${v.engines.ed25519}. The log key was taken from this service's /v1/transparency: compare it with one you pinned.</p>`;
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}

async function vkeyOf(url: string): Promise<string | null> {
  try {
    const doc = JSON.parse(await fetchText(url)) as { log?: { vkey?: unknown } };
    return typeof doc.log?.vkey === 'string' ? doc.log.vkey : null;
  } catch {
    return null;
  }
}

function wire(box: HTMLElement): void {
  const button = box.querySelector<HTMLButtonElement>('[data-verify]');
  const out = box.querySelector<HTMLElement>('[data-verify-result]');
  if (!button || !out) return;
  button.disabled = false;
  button.addEventListener('click', async () => {
    button.disabled = true;
    out.textContent = 'Verifying…';
    try {
      const [bundle, vkey] = await Promise.all([fetchText(box.dataset.proof!), vkeyOf(box.dataset.transparency!)]);
      const subtle = globalThis.isSecureContext && globalThis.crypto?.subtle ? globalThis.crypto.subtle : null;
      out.innerHTML = render(await checkProof(bundle, vkey, subtle)).text;
    } catch (e) {
      out.innerHTML = html`<p class="verdict" data-verdict="error">Could not verify: ${(e as Error).message}</p>`.text;
    } finally {
      button.disabled = false;
    }
  });
}

for (const box of document.querySelectorAll<HTMLElement>('.verifier')) wire(box);
