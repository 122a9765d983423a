/// <reference lib="dom" />
// The home page's live feed (bundled into dist/site/assets/home.js): on the first page, asks
// /v1/ledger for its newest record every 20 seconds while the tab is visible, and when it is newer
// than the page's, says so with a link that shows them. The page itself is never rewritten.
import { html } from './html.ts';

const EVERY_MS = 20_000;

function watch(feed: HTMLElement): void {
  const newest = feed.dataset.newest;
  const source = feed.dataset.feed;
  const notice = document.querySelector<HTMLElement>('[data-feed-notice]');
  if (!newest || !source || !notice) return;
  const timer = setInterval(async () => {
    if (document.visibilityState !== 'visible') return;
    try {
      const res = await fetch(source, { headers: { accept: 'application/json' } });
      if (!res.ok) return;
      const first = ((await res.json()) as { data?: { entry?: { id?: string } }[] }).data?.[0]?.entry?.id;
      // Ids are a type prefix and a ULID: the ULIDs order records of every type by time.
      if (first && first.slice(4) > newest.slice(4)) {
        notice.innerHTML = html`New records have arrived. <a href="${location.pathname + location.search}">Show them</a>.`.text;
        clearInterval(timer);
      }
    } catch {
      // offline or restarting: the next tick tries again
    }
  }, EVERY_MS);
}

for (const feed of document.querySelectorAll<HTMLElement>('[data-feed]')) watch(feed);
