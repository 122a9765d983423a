// The leaderboard (/agents without a search) in a real browser, on both stores (see browser.ts):
// its rules, table, marks and filters render, every link answers, axe finds nothing serious.
import { pageSuite } from './browser.ts';

await pageSuite('site pages in a browser: the leaderboard', ['leaderboard', 'leaderboard-demo']);
