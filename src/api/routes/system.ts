// System routes: /_ping, /version, /info. Handlers parse → call the backend → write JSON.
import type { Router } from '../router.ts';
import { sendJson } from '../http.ts';
import { infoForVersion } from './system-compat.ts';
import type { SystemInfoView, SystemVersionView } from '../../types/system.ts';

export interface SystemBackend {
  version(): Promise<SystemVersionView>;
  info(): Promise<SystemInfoView>;
  experimental(): boolean;
  /** The Swarm header: inactive, pending, error, locked, active/worker or active/manager. */
  swarmState(): string;
}

export function registerSystemRoutes(router: Router, backend: SystemBackend): void {
  const ping = (withBody: boolean) => (ctx: { res: import('node:http').ServerResponse }) => {
    // Clients negotiate the API version from these headers (the server sets Api-Version and Ostype).
    ctx.res.writeHead(200, {
      'Content-Type': 'text/plain; charset=utf-8',
      'Content-Length': withBody ? 2 : 0,
      'Cache-Control': 'no-cache, no-store, must-revalidate',
      Pragma: 'no-cache',
      'Builder-Version': '1',
      Swarm: backend.swarmState(),
    });
    ctx.res.end(withBody ? 'OK' : undefined);
  };
  router.get('/_ping', ping(true));
  router.head('/_ping', ping(false));
  router.get('/version', async (ctx) => sendJson(ctx.res, 200, await backend.version()));
  router.get('/info', async (ctx) => sendJson(ctx.res, 200, infoForVersion(await backend.info(), ctx.version)));
}
