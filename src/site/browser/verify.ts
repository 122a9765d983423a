/// <reference lib="dom" />
// The record page's **Verify in this browser** button (bundled by scripts/build.mjs into
// dist/site/assets/verify.js): fetches the proof bundle and the log's key, runs checkProof, and
// lists which checks passed. Results are written with the site's escaping helper.
import { html } from './html.ts';
import { checkProof, type ProofVerdict, type PublishedWitness } from './proof-check.ts';

function render(v: ProofVerdict) {
  return html`<p class="verdict" data-verdict="${v.ok ? 'pass' : 'fail'}">${v.ok ? '✓ Verified in this browser: every check passed.' : '✗ Verification failed: this record does not match its proof.'}</p>
<ul class="checks">${v.checks.map((c) => html`<li class="${c.ok === true ? 'pass' : c.ok === false ? 'fail' : 'note'}" data-check="${c.name}" data-ok="${String(c.ok)}">
<strong>${c.ok === true ? '✓' : c.ok === false ? '✗' : '–'} ${c.label}</strong>: ${c.detail}</li>`)}</ul>
<p class="note">SHA-256: ${v.engines.sha256}. Ed25519: ${v.engines.ed25519}. The log key${v.checks.some((c) => c.name === 'witnesses') ? ' and the witnesses\' keys were' : ' was'} taken from this service's /v1/transparency: compare them with ones you trust.</p>`;
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, cache: 'no-store' });
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  return res.text();
}

/** The log's key and its witnesses (name and vkey) as /v1/transparency publishes them. */
async function logKeysOf(url: string): Promise<{ vkey: string | null; witnesses: PublishedWitness[] }> {
  try {
    const doc = JSON.parse(await fetchText(url)) as { log?: { vkey?: unknown; witnesses?: { witnesses?: { name?: unknown; vkey?: unknown }[] } } };
    const listed = Array.isArray(doc.log?.witnesses?.witnesses) ? doc.log.witnesses.witnesses : [];
    return {
      vkey: typeof doc.log?.vkey === 'string' ? doc.log.vkey : null,
      witnesses: listed.filter((w) => typeof w.name === 'string' && typeof w.vkey === 'string').map((w) => ({ name: w.name as string, vkey: w.vkey as string })),
    };
  } catch {
    return { vkey: null, witnesses: [] };
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
      const [bundle, keys] = await Promise.all([fetchText(box.dataset.proof!), logKeysOf(box.dataset.transparency!)]);
      const subtle = globalThis.isSecureContext && globalThis.crypto?.subtle ? globalThis.crypto.subtle : null;
      out.innerHTML = render(await checkProof(bundle, keys.vkey, subtle, keys.witnesses)).text;
    } catch (e) {
      out.innerHTML = html`<p class="verdict" data-verdict="error">Could not verify: ${(e as Error).message}</p>`.text;
    } finally {
      button.disabled = false;
    }
  });
}

for (const box of document.querySelectorAll<HTMLElement>('.verifier')) wire(box);
