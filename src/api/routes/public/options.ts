// What every public read route is given.
import type { Clock } from '../../../ledger/clock.ts';
import type { PublicReads } from '../../../ledger/public/reads.ts';
import type { LogReads } from '../../../log/reads.ts';
import type { AnchorReads } from '../../../anchor/reads.ts';
import type { ObservationReads } from '../../../market/observations.ts';

export type PublicRouteOptions = { reads: PublicReads; readLimitPerMinute: number; clock: Clock; log: LogReads; anchors: AnchorReads; prices: ObservationReads };

export const PUBLIC_TAG = ['public'];

/** Public reads need no credential; OpenAPI says so with an empty requirement list. */
export const publicSecurity: Record<string, string[]>[] = [];
