// The home page, the agents list and the agent pages in a real browser, on both stores (see browser.ts).
import { pageSuite } from './browser.ts';

await pageSuite('site pages in a browser: home and agents', ['home', 'home-demo', 'agents', 'agent', 'agent-hostile', 'agent-demo']);
