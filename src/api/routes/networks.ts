// Network routes: list, inspect, create, remove, connect, disconnect, prune.
import { invalidParameter } from '../../errors.ts';
import type { EndpointSettings } from '../../types/container-api.ts';
import type { Network } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';
import type { NetworkConnectBody, NetworkCreateBody, NetworkDisconnectBody } from '../../types/networks.ts';
import { readJsonObject, sendJson, sendNoContent } from '../http.ts';
import { NETWORK_CONNECT, NETWORK_CREATE, NETWORK_DISCONNECT, decodeBody } from '../body-schemas.ts';
import type { Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface NetworksBackend {
  /** Network summaries (the networks service's list, untyped there). */
  list(filters: Map<string, string[]>): unknown[];
  inspect(ref: string, opts: { scope?: string }): GoJson<Network>;
  /** The body as sent: the backend checks its field types (dockerd's decoder errors). */
  create(body: NetworkCreateBody): Promise<{ Id: string; Warning: string }>;
  remove(ref: string): Promise<void>;
  connect(ref: string, body: NetworkConnectBody): Promise<void>;
  disconnect(ref: string, body: NetworkDisconnectBody): Promise<void>;
  prune(filters: Map<string, string[]>): Promise<{ NetworksDeleted: string[] | null }>;
}

function str(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidParameter(`invalid JSON: ${field} must be a string`);
  return v;
}

export function registerNetworkRoutes(router: Router, backend: NetworksBackend): void {
  router.get('/networks', (ctx) => {
    const list = backend.list(ctx.query.filters());
    // Before 1.28 the list was detailed: each network's Containers, as its inspect has them.
    if (!versionLessThan(ctx.version, '1.28')) return sendJson(ctx.res, 200, list);
    const detailed = list.map((n) => {
      const id = (n as { Id?: string }).Id;
      const full = id ? backend.inspect(id, {}) : undefined;
      return full?.Containers !== undefined ? { ...(n as object), Containers: full.Containers } : n;
    });
    sendJson(ctx.res, 200, detailed);
  });

  router.post('/networks/create', async (ctx) => {
    const body = decodeBody<NetworkCreateBody>(await readJsonObject(ctx.req), NETWORK_CREATE, 'CreateRequest');
    // EnableIPv4 exists from API 1.48.
    if (versionLessThan(ctx.version, '1.48')) delete body.EnableIPv4;
    sendJson(ctx.res, 201, await backend.create(body));
  });

  router.post('/networks/prune', async (ctx) => sendJson(ctx.res, 200, await backend.prune(ctx.query.filters())));

  router.get('/networks/{id}', (ctx) => {
    const scope = ctx.query.string('scope');
    sendJson(ctx.res, 200, backend.inspect(ctx.params.id, scope ? { scope } : {}));
  });

  router.delete('/networks/{id}', async (ctx) => {
    await backend.remove(ctx.params.id);
    sendNoContent(ctx.res);
  });

  router.post('/networks/{id}/connect', async (ctx) => {
    const body = decodeBody(await readJsonObject(ctx.req), NETWORK_CONNECT, 'ConnectOptions');
    const container = str(body.Container, 'Container');
    await backend.connect(ctx.params.id, {
      ...(container !== undefined ? { Container: container } : {}),
      EndpointConfig: (body.EndpointConfig as EndpointSettings | null | undefined) ?? null,
    });
    sendNoContent(ctx.res, 200);
  });

  router.post('/networks/{id}/disconnect', async (ctx) => {
    const body = decodeBody(await readJsonObject(ctx.req), NETWORK_DISCONNECT, 'DisconnectOptions');
    const container = str(body.Container, 'Container');
    await backend.disconnect(ctx.params.id, { ...(container !== undefined ? { Container: container } : {}), Force: body.Force === true });
    sendNoContent(ctx.res, 200);
  });
}
