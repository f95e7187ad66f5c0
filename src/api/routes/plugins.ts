// Managed-plugin routes (/plugins*): list, inspect, privileges, install/upgrade and push (JSON progress
// streams, as dockerd), create, enable/disable, configure, remove. Handlers parse the request and
// call the backend, which says what it can and cannot do.
import { invalidParameter } from '../../errors.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import type { PluginPrivilege, PluginView } from '../../types/plugins.ts';
import { ProgressResponse } from './distribution.ts';
import { readJson, sendJson, sendNoContent } from '../http.ts';
import type { RequestContext, Router } from '../router.ts';

export interface PluginsBackend {
  list(filters: Map<string, string[]>): Promise<PluginView[]>;
  inspect(name: string): Promise<PluginView>;
  privileges(remote: string, registryAuth?: string): Promise<PluginPrivilege[]>;
  /**
   * Install (pull) or upgrade from a registry: `name` is the local name to give it; `onName` hears the
   * final name before any progress is written. Returns the plugin's name.
   */
  install(
    remote: string,
    opts: { name?: string; upgradeOf?: string; privileges: unknown; registryAuth?: string; onName?: (name: string) => void },
    sink: ProgressSink,
    signal: AbortSignal,
  ): Promise<string>;
  create(name: string, context: NodeJS.ReadableStream): Promise<void>;
  enable(name: string, opts: { timeout: number }): Promise<void>;
  disable(name: string, opts: { force: boolean }): Promise<void>;
  configure(name: string, settings: string[]): Promise<void>;
  push(name: string, opts: { registryAuth?: string }, sink: ProgressSink, signal: AbortSignal): Promise<void>;
  /** Returns the removed plugin, as the API answers. */
  remove(name: string, opts: { force: boolean }): Promise<PluginView>;
}

const name = (ctx: RequestContext): string => ctx.params['name'] ?? '';
const auth = (ctx: RequestContext): { registryAuth?: string } => {
  const h = ctx.req.headers['x-registry-auth'];
  return typeof h === 'string' ? { registryAuth: h } : {};
};

export function registerPluginRoutes(router: Router, backend: PluginsBackend): void {
  router.get('/plugins', async (ctx) => sendJson(ctx.res, 200, await backend.list(ctx.query.filters())));
  router.get('/plugins/privileges', async (ctx) =>
    sendJson(ctx.res, 200, await backend.privileges(ctx.query.string('remote') ?? '', auth(ctx).registryAuth)),
  );
  router.post('/plugins/pull', async (ctx) => {
    const remote = ctx.query.string('remote') ?? '';
    const local = ctx.query.string('name');
    const privileges = await readJson(ctx.req, []);
    const out = new ProgressResponse(ctx.res);
    // The docker CLI enables the plugin by the name this header gives.
    const onName = (n: string) => ctx.res.setHeader('Docker-Plugin-Name', n);
    await out.run(async (sink, signal) => {
      await backend.install(remote, { ...(local ? { name: local } : {}), privileges, ...auth(ctx), onName }, sink, signal);
    });
  });
  router.post('/plugins/create', async (ctx) => {
    await backend.create(ctx.query.string('name') ?? '', ctx.req);
    sendNoContent(ctx.res, 204);
  });
  router.get('/plugins/{name*}/json', async (ctx) => sendJson(ctx.res, 200, await backend.inspect(name(ctx))));
  router.post('/plugins/{name*}/enable', async (ctx) => {
    await backend.enable(name(ctx), { timeout: ctx.query.int('timeout', 30) ?? 30 });
    sendNoContent(ctx.res, 200);
  });
  router.post('/plugins/{name*}/disable', async (ctx) => {
    await backend.disable(name(ctx), { force: ctx.query.bool('force') });
    sendNoContent(ctx.res, 200);
  });
  router.post('/plugins/{name*}/upgrade', async (ctx) => {
    const remote = ctx.query.string('remote') ?? '';
    const privileges = await readJson(ctx.req, []);
    await new ProgressResponse(ctx.res).run(async (sink, signal) => {
      await backend.install(remote, { upgradeOf: name(ctx), privileges, ...auth(ctx) }, sink, signal);
    });
  });
  router.post('/plugins/{name*}/push', async (ctx) => {
    await new ProgressResponse(ctx.res).run((sink, signal) => backend.push(name(ctx), auth(ctx), sink, signal));
  });
  router.post('/plugins/{name*}/set', async (ctx) => {
    const body = await readJson<unknown>(ctx.req, []);
    const settings = Array.isArray(body) && body.every((s) => typeof s === 'string') ? (body as string[]) : undefined;
    if (!settings) throw invalidParameter('invalid plugin settings: expected a list of "key=value" strings');
    await backend.configure(name(ctx), settings);
    sendNoContent(ctx.res, 204);
  });
  router.delete('/plugins/{name*}', async (ctx) => {
    sendJson(ctx.res, 200, await backend.remove(name(ctx), { force: ctx.query.bool('force') }));
  });
}
