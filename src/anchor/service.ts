// Anchoring in a serving process: the anchoring job (job.ts) from the configuration, run beside
// the HTTP service until shutdown (compose.ts starts and stops it). On PostgreSQL every API node runs one; the advisory lock lets one
// of them anchor at a time.
import type { AnchorConfig } from '../config.ts';
import type { LedgerStore } from '../store/port.ts';
import { esploraHeaderSource } from '../verify/bitcoin-headers.ts';
import { AnchorJob } from './job.ts';

/** The anchoring job, not yet started. */
export function anchoringJob(store: LedgerStore, config: AnchorConfig, notice: (message: string) => void): AnchorJob {
  return new AnchorJob({
    anchors: store.anchors,
    log: store.log,
    calendars: config.calendars,
    headerAt: esploraHeaderSource(config.headersUrl).headerAt,
    intervalS: config.intervalS,
    onNotice: notice,
  });
}
