// Cluster routes: /swarm*, /nodes*, /services*, /tasks*, /secrets*, /configs* (30 operations).
// Handlers parse and check the request, then call the backend; a node outside a cluster answers
// through the same routes with dockerd's errors (clients' clean-up code depends on them).
import { invalidParameter } from '../../errors.ts';
import type {
  ClusterLogOptions,
  ClusterObject,
  ClusterObjectKind,
  CreatableKind,
  MutableKind,
  ObjectUpdateOptions,
  SwarmInitRequest,
  SwarmJoinRequest,
  SwarmUpdateOptions,
} from '../../types/cluster.ts';
import { readJsonObject, sendJson, sendNoContent, type Query } from '../http.ts';
import type { RequestContext, Router } from '../router.ts';
import { versionLessThan } from '../../util/api-version.ts';
import { decodeBody } from '../body-schemas.ts';
import {
  CONFIG_SPEC,
  NODE_SPEC,
  SECRET_SPEC,
  SERVICE_SPEC,
  SWARM_INIT,
  SWARM_JOIN,
  SWARM_SPEC,
  SWARM_UNLOCK,
} from '../cluster-body-schemas.ts';
import { adjustInitForVersion, adjustServiceForVersion, checkTemplatingVersion } from './cluster-compat.ts';
import type { Kind } from '../../oci/wire-schema.ts';

/** Each body's Go type (dockerd's decoder: canonical names, unknown fields dropped, Go type errors). */
const SPECS: Record<'nodes' | 'services' | 'secrets' | 'configs', [Record<string, Kind>, string]> = {
  nodes: [NODE_SPEC, 'NodeSpec'],
  services: [SERVICE_SPEC, 'ServiceSpec'],
  secrets: [SECRET_SPEC, 'SecretSpec'],
  configs: [CONFIG_SPEC, 'ConfigSpec'],
};

async function readSpec(ctx: RequestContext, kind: keyof typeof SPECS): Promise<ClusterObject> {
  const [fields, goType] = SPECS[kind];
  const spec = decodeBody<ClusterObject>(await readJsonObject(ctx.req), fields, goType);
  if (kind === 'services') adjustServiceForVersion(spec, ctx.version);
  return spec;
}

export interface ClusterBackend {
  inspectCluster(): Promise<ClusterObject>;
  /** Returns the new node's ID. */
  init(req: SwarmInitRequest): Promise<string>;
  join(req: SwarmJoinRequest): Promise<void>;
  leave(force: boolean): Promise<void>;
  updateCluster(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void>;
  unlockKey(): Promise<{ UnlockKey: string }>;
  unlock(key: string): Promise<void>;
  list(kind: ClusterObjectKind, filters: Map<string, string[]>, opts: { status?: boolean }): Promise<ClusterObject[]>;
  inspect(kind: ClusterObjectKind, id: string, opts: { insertDefaults?: boolean }): Promise<ClusterObject>;
  /** `queryRegistry`: pin the image to a digest (dockerd does it for API < 1.30; newer clients ask /distribution first). */
  create(
    kind: CreatableKind,
    spec: ClusterObject,
    opts: { registryAuth?: string; queryRegistry?: boolean },
  ): Promise<{ ID: string; Warnings?: string[] }>;
  update(kind: MutableKind, id: string, spec: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings?: string[] }>;
  remove(kind: MutableKind, id: string, opts: { force: boolean }): Promise<void>;
  /** A service's or task's log stream, already framed as the container logs endpoint frames it. */
  logs(kind: 'services' | 'tasks', id: string, opts: ClusterLogOptions): Promise<AsyncIterable<Buffer>>;
}

/** The `version` query parameter every update carries (the object's version the client read). */
function version(q: Query): number {
  const raw = q.string('version');
  if (raw === undefined || !/^\d+$/.test(raw))
    throw invalidParameter(`invalid version: ${JSON.stringify(raw ?? '')}: a non-negative integer is required`);
  return Number(raw);
}

function stringField(body: Record<string, unknown>, name: string): string | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'string') throw invalidParameter(`invalid ${name}: must be a string`);
  return v;
}

function stringList(body: Record<string, unknown>, name: string): string[] | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (!Array.isArray(v) || v.some((x) => typeof x !== 'string')) throw invalidParameter(`invalid ${name}: must be a list of strings`);
  return v as string[];
}

function objectField(body: Record<string, unknown>, name: string): ClusterObject | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'object' || Array.isArray(v)) throw invalidParameter(`invalid ${name}: must be an object`);
  return v as ClusterObject;
}

function intField(body: Record<string, unknown>, name: string, max: number): number | undefined {
  const v = body[name];
  if (v === undefined || v === null) return undefined;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0 || v > max)
    throw invalidParameter(`invalid ${name}: must be an integer between 0 and ${max}`);
  return v;
}

function parseInit(body: Record<string, unknown>): SwarmInitRequest {
  const req: SwarmInitRequest = {};
  for (const k of ['ListenAddr', 'AdvertiseAddr', 'DataPathAddr', 'Availability'] as const) {
    const v = stringField(body, k);
    if (v !== undefined) req[k] = v;
  }
  const port = intField(body, 'DataPathPort', 65535);
  const pool = stringList(body, 'DefaultAddrPool');
  const size = intField(body, 'SubnetSize', 32);
  const spec = objectField(body, 'Spec');
  if (port !== undefined) req.DataPathPort = port;
  if (pool !== undefined) req.DefaultAddrPool = pool;
  if (size !== undefined) req.SubnetSize = size;
  if (spec !== undefined) req.Spec = spec;
  if (body.ForceNewCluster !== undefined && typeof body.ForceNewCluster !== 'boolean')
    throw invalidParameter('invalid ForceNewCluster: must be a boolean');
  if (body.ForceNewCluster) req.ForceNewCluster = true;
  return req;
}

function parseJoin(body: Record<string, unknown>): SwarmJoinRequest {
  const req: SwarmJoinRequest = {};
  for (const k of ['ListenAddr', 'AdvertiseAddr', 'DataPathAddr', 'JoinToken', 'Availability'] as const) {
    const v = stringField(body, k);
    if (v !== undefined) req[k] = v;
  }
  const remotes = stringList(body, 'RemoteAddrs');
  if (remotes !== undefined) req.RemoteAddrs = remotes;
  return req;
}

function logOptions(q: Query): ClusterLogOptions {
  const opts: ClusterLogOptions = {
    follow: q.bool('follow'),
    stdout: q.bool('stdout'),
    stderr: q.bool('stderr'),
    timestamps: q.bool('timestamps'),
    details: q.bool('details'),
  };
  const since = q.string('since');
  const tail = q.string('tail');
  if (since !== undefined) opts.since = since;
  if (tail !== undefined) opts.tail = tail;
  return opts;
}

const id = (ctx: RequestContext): string => ctx.params['id'] ?? '';

export function registerClusterRoutes(router: Router, backend: ClusterBackend): void {
  router.get('/swarm', async (ctx) => sendJson(ctx.res, 200, await backend.inspectCluster()));
  router.post('/swarm/init', async (ctx) => {
    const body = decodeBody(await readJsonObject(ctx.req), SWARM_INIT, 'InitRequest');
    adjustInitForVersion(body, ctx.version);
    sendJson(ctx.res, 200, await backend.init(parseInit(body)));
  });
  router.post('/swarm/join', async (ctx) => {
    await backend.join(parseJoin(decodeBody(await readJsonObject(ctx.req), SWARM_JOIN, 'JoinRequest')));
    sendNoContent(ctx.res, 200);
  });
  router.post('/swarm/leave', async (ctx) => {
    await backend.leave(ctx.query.bool('force'));
    sendNoContent(ctx.res, 200);
  });
  router.post('/swarm/update', async (ctx) => {
    const opts: SwarmUpdateOptions = {
      version: version(ctx.query),
      rotateWorkerToken: ctx.query.bool('rotateWorkerToken'),
      rotateManagerToken: ctx.query.bool('rotateManagerToken'),
      rotateManagerUnlockKey: ctx.query.bool('rotateManagerUnlockKey'),
    };
    await backend.updateCluster(decodeBody<ClusterObject>(await readJsonObject(ctx.req), SWARM_SPEC, 'Spec'), opts);
    sendNoContent(ctx.res, 200);
  });
  router.get('/swarm/unlockkey', async (ctx) => sendJson(ctx.res, 200, await backend.unlockKey()));
  router.post('/swarm/unlock', async (ctx) => {
    const key = stringField(decodeBody(await readJsonObject(ctx.req), SWARM_UNLOCK, 'UnlockRequest'), 'UnlockKey') ?? '';
    await backend.unlock(key);
    sendNoContent(ctx.res, 200);
  });

  const families: ClusterObjectKind[] = ['nodes', 'services', 'tasks', 'secrets', 'configs'];
  for (const kind of families) {
    router.get(`/${kind}`, async (ctx) => {
      // The status parameter exists from API 1.41.
      const status = !versionLessThan(ctx.version, '1.41') && ctx.query.bool('status');
      sendJson(ctx.res, 200, await backend.list(kind, ctx.query.filters(), { status }));
    });
    router.get(`/${kind}/{id}`, async (ctx) =>
      sendJson(ctx.res, 200, await backend.inspect(kind, id(ctx), { insertDefaults: ctx.query.bool('insertDefaults') })),
    );
  }
  for (const kind of ['services', 'secrets', 'configs'] as const) {
    router.post(`/${kind}/create`, async (ctx) => {
      const auth = ctx.req.headers['x-registry-auth'];
      const spec = await readSpec(ctx, kind);
      if (kind !== 'services') checkTemplatingVersion(kind, spec, ctx.version);
      const created = await backend.create(kind, spec, {
        ...(typeof auth === 'string' ? { registryAuth: auth } : {}),
        ...(versionLessThan(ctx.version, '1.30') ? { queryRegistry: true } : {}),
      });
      sendJson(ctx.res, 201, kind === 'services' ? { ID: created.ID, Warnings: created.Warnings ?? [] } : { ID: created.ID });
    });
  }
  for (const kind of ['nodes', 'services', 'secrets', 'configs'] as const) {
    router.post(`/${kind}/{id}/update`, async (ctx) => {
      const opts: ObjectUpdateOptions = { version: version(ctx.query) };
      const auth = ctx.req.headers['x-registry-auth'];
      if (typeof auth === 'string') opts.registryAuth = auth;
      const from = ctx.query.string('registryAuthFrom');
      const rollback = ctx.query.string('rollback');
      if (from !== undefined) opts.registryAuthFrom = from;
      if (rollback !== undefined) opts.rollback = rollback;
      if (versionLessThan(ctx.version, '1.30')) opts.queryRegistry = true;
      const r = await backend.update(kind, id(ctx), await readSpec(ctx, kind), opts);
      if (kind === 'services') sendJson(ctx.res, 200, { Warnings: r.Warnings ?? [] });
      else sendNoContent(ctx.res, 200);
    });
    router.delete(`/${kind}/{id}`, async (ctx) => {
      await backend.remove(kind, id(ctx), { force: ctx.query.bool('force') });
      // As the API: nodes and services answer 200, secrets and configs 204.
      sendNoContent(ctx.res, kind === 'secrets' || kind === 'configs' ? 204 : 200);
    });
  }
  for (const kind of ['services', 'tasks'] as const) {
    router.get(`/${kind}/{id}/logs`, async (ctx) => {
      const abort = new AbortController();
      ctx.res.on('close', () => abort.abort());
      const stream = await backend.logs(kind, id(ctx), { ...logOptions(ctx.query), signal: abort.signal });
      // The multiplexed media type is announced from API 1.42 (the frames are the same before).
      const type = versionLessThan(ctx.version, '1.42') ? 'raw-stream' : 'multiplexed-stream';
      ctx.res.writeHead(200, { 'Content-Type': `application/vnd.docker.${type}` });
      ctx.res.flushHeaders();
      for await (const chunk of stream) {
        if (!ctx.res.write(chunk)) await new Promise((r) => ctx.res.once('drain', r));
        if (abort.signal.aborted) break;
      }
      ctx.res.end();
    });
  }
}
