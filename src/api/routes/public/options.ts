// What every public read route is given.
import type { Clock } from '../../../domain/clock.ts';
import type { PublicReads } from '../../../ledger/public/reads.ts';
import type { LogReads } from '../../../log/reads.ts';
import type { AnchorReads } from '../../../anchor/reads.ts';
import type { ObservationReads } from '../../../market/observations.ts';
import type { PerformanceService } from '../../../performance/service.ts';
import type { ReadLimits } from '../../public-http.ts';
import type { ReadCache } from '../../read-cache.ts';
import type { Directory } from '../../../directory/service.ts';

export type PublicRouteOptions = {
  reads: PublicReads; cache: ReadCache; clock: Clock; log: LogReads; anchors: AnchorReads; prices: ObservationReads; performance: PerformanceService; directory: Directory;
} & ReadLimits;

export const PUBLIC_TAG = ['public'];

/** Public reads need no credential; OpenAPI says so with an empty requirement list. */
export const publicSecurity: Record<string, string[]>[] = [];
