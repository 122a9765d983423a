// The public site wing (src/site/): the HTML pages at {site_url} (/, /agents, /agents/<handle>,
// /records/<id>, /transparency, /docs), their 404 and error pages, their one stylesheet and
// small browser scripts (the equity chart, Verify in this browser), and the reads behind them.
// Owns how the ledger looks to people; what it says comes from the same use cases as the JSON
// reads (public reads, log, anchors). Badges, llms.txt and the API reference live elsewhere.
import type { AnchorReads } from '../anchor/reads.ts';
import type { ExecutionLinks } from '../brokers/links.ts';
import type { Clock } from '../domain/clock.ts';
import type { LedgerError } from '../domain/errors.ts';
import type { AgentRecords } from '../ledger/public/agent-records.ts';
import type { PublicReads } from '../ledger/public/reads.ts';
import type { LogReads } from '../log/reads.ts';
import type { ObservationReads } from '../market/observations.ts';
import type { Directory } from '../directory/service.ts';
import { Assets } from './assets.ts';
import { DocPages } from './doc-pages.ts';
import { layout, type Frame, type Page } from './layout.ts';
import { errorPage, notFoundPage } from './pages/errors.ts';
import { SiteReads, type SiteDeps } from './reads.ts';

export type SiteOptions = {
  reads: PublicReads;
  log: LogReads;
  anchors: AnchorReads;
  prices: ObservationReads;
  records: AgentRecords;
  links: ExecutionLinks;
  clock: Clock;
  siteUrl: string;
  baseUrl: string;
  profileSections?: SiteDeps['profileSections'];
  /** The directory GET /v1/agents reads: the leaderboard at /agents. */
  directory: Directory;
};

/** Paths that belong to the JSON interface or to machines: their errors stay in the 2.7 body. */
const MACHINE_PATHS = /^\/(v1(\/|$)|healthz$|readyz$|metrics$|assets\/|badge\/|llms(-full)?\.txt$)/;

export class Site {
  readonly reads: SiteReads;
  readonly assets = new Assets();
  readonly docs = new DocPages();
  readonly frame: Frame;

  constructor(readonly options: SiteOptions) {
    this.reads = new SiteReads(options);
    this.frame = { siteUrl: options.siteUrl.replace(/\/$/, ''), baseUrl: options.baseUrl.replace(/\/$/, ''), assets: this.assets };
  }

  render(page: Page): string {
    return layout(this.frame, page);
  }

  private readonly renderedFor = new WeakMap<object, string>();

  /** A page rendered once per `source`: a use case's answer that never changes (a built page of the directory). */
  renderOnce(source: object, page: () => Page): string {
    let text = this.renderedFor.get(source);
    if (text === undefined) this.renderedFor.set(source, (text = this.render(page())));
    return text;
  }

  /**
   * An error as an HTML page, for a person's browser on a site path; null when the 2.7 JSON body
   * is the answer (the interface's paths, or a client that does not ask for HTML).
   */
  errorHtml(request: { url: string; id: string; headers: { accept?: string | undefined } }, error: LedgerError): string | null {
    const path = request.url.split('?')[0] ?? '/';
    if (MACHINE_PATHS.test(path)) return null;
    // A page only for a client that asks for HTML (every browser does); anything else, curl's
    // */* included, gets the 2.7 body it can parse.
    if (!/text\/html/.test(request.headers.accept ?? '')) return null;
    const safePath = path.length > 200 ? path.slice(0, 200) : path;
    return this.render(error.status === 404
      ? notFoundPage(safePath, error.message, request.id)
      : errorPage(error.status, error.message, request.id, safePath));
  }
}
