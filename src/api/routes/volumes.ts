// Volume routes: GET /volumes, POST /volumes/create, GET/DELETE /volumes/{name}, POST /volumes/prune.
import type { VolumeCreateRequest, VolumeView } from '../../types/volumes.ts';
import { readJsonObject, sendJson, sendNoContent } from '../http.ts';
import type { Router } from '../router.ts';
import { decodeBody } from '../body-schemas.ts';
import { VOLUME_CREATE } from '../cluster-body-schemas.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface VolumesBackend {
  list(opts?: { filters?: Map<string, string[]>; usage?: boolean }): Promise<VolumeView[]>;
  create(req: VolumeCreateRequest): Promise<VolumeView>;
  inspect(name: string): Promise<VolumeView>;
  remove(name: string, opts: { force: boolean }): Promise<void>;
  prune(filters: Map<string, string[]>): Promise<{ VolumesDeleted: string[]; SpaceReclaimed: number }>;
}

export function registerVolumeRoutes(router: Router, backend: VolumesBackend): void {
  router.get('/volumes', async (ctx) => {
    const volumes = await backend.list({ filters: ctx.query.filters() });
    sendJson(ctx.res, 200, { Volumes: volumes, Warnings: [] });
  });

  router.post('/volumes/create', async (ctx) => {
    // volume.CreateOptions as Go decodes it: names in any case, Go's type errors.
    const body = decodeBody<Record<string, unknown>>(await readJsonObject(ctx.req, true), VOLUME_CREATE, 'CreateOptions');
    const req: VolumeCreateRequest = {};
    if (body.Name) req.Name = body.Name as string;
    if (body.Driver) req.Driver = body.Driver as string;
    if (body.DriverOpts !== undefined) req.DriverOpts = body.DriverOpts as Record<string, string>;
    if (body.Labels !== undefined) req.Labels = body.Labels as Record<string, string>;
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
