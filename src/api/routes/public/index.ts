// The public reads (interface section 4, endpoints 5 to 10) in one plugin context, with their
// HTTP hygiene (public-http.ts) applied to them alone.
import { installPublicHttp } from '../../public-http.ts';
import type { App } from '../../types.ts';
import { agentRoutes } from './agents.ts';
import { chainRoutes } from './chain.ts';
import { directoryRoutes } from './directory.ts';
import { exportRoutes } from './export.ts';
import { ledgerRoutes } from './ledger.ts';
import { logRoutes } from './log.ts';
import { anchorRoutes } from './anchors.ts';
import type { PublicRouteOptions } from './options.ts';
import { performanceRoutes } from './performance.ts';
import { proofRoutes } from './proof.ts';
import { transparencyRoutes } from './transparency.ts';

export async function publicRoutes(app: App, options: PublicRouteOptions): Promise<void> {
  await installPublicHttp(app, options);
  for (const routes of [directoryRoutes, agentRoutes, chainRoutes, proofRoutes, ledgerRoutes, exportRoutes, transparencyRoutes, logRoutes, anchorRoutes, performanceRoutes]) {
    await app.register(routes, options);
  }
}
