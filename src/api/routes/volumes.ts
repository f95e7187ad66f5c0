// Volume routes: GET /volumes, POST /volumes/create, GET/PUT/DELETE /volumes/{name}, POST /volumes/prune.
// From API 1.42 a manager's cluster (CSI) volumes join in as dockerd's volume router has them: listed
// after the local ones, looked up when no local volume has the name, created when the body has a
// ClusterVolumeSpec, removed when no local volume was (or with force), and updated by PUT.
import type { VolumeCreateRequest, VolumeView } from '../../types/volumes.ts';
import { readJsonObject, sendJson, sendNoContent } from '../http.ts';
import type { Router } from '../router.ts';
import { decodeBody } from '../body-schemas.ts';
import { VOLUME_CREATE, VOLUME_UPDATE } from '../cluster-body-schemas.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { invalidParameter, isNotFound, messageOf, unavailable } from '../../errors.ts';

export interface VolumesBackend {
  list(opts?: { filters?: Map<string, string[]>; usage?: boolean }): Promise<VolumeView[]>;
  create(req: VolumeCreateRequest): Promise<VolumeView>;
  inspect(name: string): Promise<VolumeView>;
  remove(name: string, opts: { force: boolean }): Promise<void>;
  prune(filters: Map<string, string[]>): Promise<{ VolumesDeleted: string[]; SpaceReclaimed: number }>;
}

/** The cluster side (cluster/manager/volumes-api.ts); each call answers dockerd's 503 off a manager. */
export interface ClusterVolumesBackend {
  /** An active manager (never loads cluster mode to answer). */
  isManager(): boolean;
  listVolumes(): Promise<VolumeView[]>;
  getVolume(ref: string): Promise<VolumeView>;
  createVolume(req: Record<string, unknown>): Promise<VolumeView>;
  updateVolume(ref: string, version: number, body: Record<string, unknown>): Promise<void>;
  removeVolume(ref: string, force: boolean): Promise<void>;
}

/** The API version cluster volumes came with. */
const CLUSTER_VOLUMES = '1.42';

/** Go's strconv.ParseUint(s, 10, 64), with its error words. */
function parseUint64(raw: string): number {
  if (!/^[0-9]+$/.test(raw)) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(raw)}: invalid syntax`);
  if (BigInt(raw) > 0xffffffffffffffffn) throw new Error(`strconv.ParseUint: parsing ${JSON.stringify(raw)}: value out of range`);
  return Number(raw);
}

export function registerVolumeRoutes(router: Router, backend: VolumesBackend, cluster?: ClusterVolumesBackend): void {
  const withCluster = (version: string) => !!cluster && !versionLessThan(version, CLUSTER_VOLUMES) && cluster.isManager();

  router.get('/volumes', async (ctx) => {
    const volumes: unknown[] = await backend.list({ filters: ctx.query.filters() });
    const warnings: string[] = [];
    if (withCluster(ctx.version)) {
      // A cluster failure is a warning beside the local list, as dockerd.
      try {
        volumes.push(...(await cluster!.listVolumes()));
      } catch (err) {
        warnings.push(messageOf(err));
      }
    }
    sendJson(ctx.res, 200, { Volumes: volumes, Warnings: warnings });
  });

  router.post('/volumes/create', async (ctx) => {
    // volume.CreateOptions as Go decodes it: names in any case, Go's type errors.
    const body = decodeBody<Record<string, unknown>>(await readJsonObject(ctx.req, true), VOLUME_CREATE, 'CreateOptions');
    if (cluster && body.ClusterVolumeSpec !== undefined && !versionLessThan(ctx.version, CLUSTER_VOLUMES)) {
      sendJson(ctx.res, 201, await cluster.createVolume(body));
      return;
    }
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
    // A local volume first (by name only); a cluster volume also by ID or ID prefix.
    try {
      sendJson(ctx.res, 200, await backend.inspect(ctx.params.name));
    } catch (err) {
      if (!isNotFound(err) || !withCluster(ctx.version)) throw err;
      sendJson(ctx.res, 200, await cluster!.getVolume(ctx.params.name));
    }
  });

  router.put('/volumes/{name}', async (ctx) => {
    if (!cluster?.isManager()) throw unavailable('volume update only valid for cluster volumes, but swarm is unavailable');
    const raw = ctx.query.string('version') ?? '';
    let version: number;
    try {
      version = parseUint64(raw);
    } catch (err) {
      throw invalidParameter(`invalid swarm object version '${raw}': ${messageOf(err)}`);
    }
    const body = decodeBody<Record<string, unknown>>(await readJsonObject(ctx.req, true), VOLUME_UPDATE, 'UpdateOptions');
    await cluster.updateVolume(ctx.params.name, version, body);
    ctx.res.writeHead(200, { 'Content-Length': 0 });
    ctx.res.end();
  });

  router.delete('/volumes/{name}', async (ctx) => {
    const force = ctx.query.bool('force');
    // The local volume first; none (or force, which hides a missing one): the cluster's.
    let missing: unknown;
    try {
      await backend.remove(ctx.params.name, { force });
    } catch (err) {
      if (!isNotFound(err)) throw err;
      missing = err;
    }
    if ((missing || force) && withCluster(ctx.version)) await cluster!.removeVolume(ctx.params.name, force);
    else if (missing) throw missing;
    sendNoContent(ctx.res);
  });
}
