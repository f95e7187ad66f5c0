// Volume routes: GET /volumes, POST /volumes/create, GET/DELETE /volumes/{name}, POST /volumes/prune.
import { invalidParameter } from '../../errors.ts';
import type { VolumeCreateRequest, VolumeView } from '../../types/volumes.ts';
import { readJsonObject, sendJson, sendNoContent } from '../http.ts';
import type { Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface VolumesBackend {
  list(opts?: { filters?: Map<string, string[]>; usage?: boolean }): Promise<VolumeView[]>;
  create(req: VolumeCreateRequest): Promise<VolumeView>;
  inspect(name: string): Promise<VolumeView>;
  remove(name: string, opts: { force: boolean }): Promise<void>;
  prune(filters: Map<string, string[]>): Promise<{ VolumesDeleted: string[]; SpaceReclaimed: number }>;
}

function stringMap(v: unknown, field: string): Record<string, string> | null | undefined {
  if (v === undefined || v === null) return v;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidParameter(`invalid ${field}: expected an object of strings`);
  for (const [k, x] of Object.entries(v))
    if (typeof x !== 'string') throw invalidParameter(`invalid ${field}: value of ${JSON.stringify(k)} must be a string`);
  return v as Record<string, string>;
}

export function registerVolumeRoutes(router: Router, backend: VolumesBackend): void {
  router.get('/volumes', async (ctx) => {
    const volumes = await backend.list({ filters: ctx.query.filters() });
    sendJson(ctx.res, 200, { Volumes: volumes, Warnings: [] });
  });

  router.post('/volumes/create', async (ctx) => {
    const body = await readJsonObject<Record<string, unknown>>(ctx.req, true);
    if (body.Name !== undefined && typeof body.Name !== 'string') throw invalidParameter('invalid Name: must be a string');
    if (body.Driver !== undefined && typeof body.Driver !== 'string') throw invalidParameter('invalid Driver: must be a string');
    const req: VolumeCreateRequest = {};
    if (body.Name) req.Name = body.Name as string;
    if (body.Driver) req.Driver = body.Driver as string;
    const opts = stringMap(body.DriverOpts, 'DriverOpts');
    const labels = stringMap(body.Labels, 'Labels');
    if (opts !== undefined) req.DriverOpts = opts;
    if (labels !== undefined) req.Labels = labels;
    sendJson(ctx.res, 201, await backend.create(req));
  });

  router.post('/volumes/prune', async (ctx) => {
    const filters = ctx.query.filters();
    // API 1.42 made prune take anonymous volumes only; older clients still mean every unused one.
    if (versionLessThan(ctx.version, '1.42')) filters.set('all', ['true']);
    sendJson(ctx.res, 200, await backend.prune(filters));
  });

  router.get('/volumes/{name}', async (ctx) => {
    sendJson(ctx.res, 200, await backend.inspect(ctx.params.name));
  });

  router.delete('/volumes/{name}', async (ctx) => {
    await backend.remove(ctx.params.name, { force: ctx.query.bool('force') });
    sendNoContent(ctx.res);
  });
}
