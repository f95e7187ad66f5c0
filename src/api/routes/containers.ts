// Container routes: parse the request → call the ContainersBackend → write JSON or a stream.
import { logPayload, TimestampPrefixes } from '../stream-framing.ts';
import { parseTimeValue } from '../../util/time.ts';
import { EngineError, invalidParameter, notFound } from '../../errors.ts';
import type { ContainerCreateBody, ContainerUpdateBody, WaitCondition } from '../../types/container-api.ts';
import type { ContainerInspectView } from '../../types/container-views.ts';
import type { LogChunks, LogsRequest } from '../../types/logs.ts';
import { platformParam, readJson, readJsonObject, sendJson, sendJsonList, sendJsonSliced, sendNoContent, type Query } from '../http.ts';
import type { Router } from '../router.ts';
import { inspectForVersion, listForVersion, type ContainerListEntry } from './container-compat.ts';
import { adaptCreateForVersion, adaptUpdateForVersion, type CreateCompatHost } from './container-create-compat.ts';
import { CONTAINER_UPDATE, decodeBody, decodeContainerCreate } from '../body-schemas.ts';
import { versionLessThan } from '../../util/api-version.ts';
import type { PlatformSpec } from '../../util/platform-spec.ts';

export interface ContainersBackend {
  create(
    body: ContainerCreateBody,
    name: string | undefined,
    version: string,
    platform?: PlatformSpec,
  ): Promise<{ Id: string; Warnings: string[] }>;
  /** Entries as views, or as their JSON text where the service keeps that cached (docker ps). */
  list(opts: { all: boolean; limit?: number; size: boolean; filters: Map<string, string[]> }): Promise<ContainerListEntry[]>;
  inspect(ref: string, size: boolean, version: string): Promise<ContainerInspectView>;
  start(ref: string): Promise<'started' | 'already'>;
  stop(ref: string, opts: { timeout?: number; signal?: string }): Promise<'stopped' | 'already'>;
  restart(ref: string, opts: { timeout?: number; signal?: string }): Promise<void>;
  kill(ref: string, signal: string | undefined): Promise<void>;
  pause(ref: string): Promise<void>;
  unpause(ref: string): Promise<void>;
  /** Resolves the container first (so a 404 can still be a status), then waits. */
  wait(ref: string, condition: WaitCondition): Promise<() => Promise<{ StatusCode: number; Error: { Message: string } | null }>>;
  remove(ref: string, opts: { force: boolean; volumes: boolean; link: boolean }): Promise<void>;
  rename(ref: string, newName: string): Promise<void>;
  update(ref: string, body: ContainerUpdateBody): Promise<{ Warnings: string[] }>;
  resize(ref: string, height: number, width: number): Promise<void>;
  top(ref: string, psArgs: string): Promise<{ Titles: string[]; Processes: string[][] }>;
  logs(ref: string, req: LogsRequest, signal: AbortSignal): Promise<{ tty: boolean; lines: LogChunks }>;
  prune(filters: Map<string, string[]>): Promise<{ ContainersDeleted: string[] | null; SpaceReclaimed: number }>;
}

/** Logs since/until: unix seconds with an optional fraction, RFC 3339, or a duration; "0" is unset. */
export function parseTimestamp(value: string | undefined, name: string): bigint | undefined {
  if (value === undefined || value === '' || value === '0') return undefined;
  const ns = parseTimeValue(value);
  if (ns === undefined) throw invalidParameter(`invalid value for ${name}: ${JSON.stringify(value)}`);
  return ns;
}

/** Stop and restart options; the signal parameter exists from API 1.42. */
function stopOpts(q: Query, version: string): { timeout?: number; signal?: string } {
  const t = q.int('t');
  const signal = versionLessThan(version, '1.42') ? undefined : q.string('signal');
  return { ...(t !== undefined ? { timeout: t } : {}), ...(signal ? { signal } : {}) };
}

export function registerContainerRoutes(router: Router, backend: ContainersBackend, host: CreateCompatHost = { cgroup2: false }): void {
  router.post('/containers/create', async (ctx) => {
    const body = decodeContainerCreate(await readJsonObject(ctx.req, false, 'container.CreateRequest'));
    const name = ctx.query.string('name') || undefined;
    const warnings = adaptCreateForVersion(body, ctx.version, host);
    // API 1.41 added ?platform=; an invalid one is refused (400) before anything is looked up, and
    // the image must be of it (dockerd's 404 makes the CLI pull it).
    const platform = versionLessThan(ctx.version, '1.41') ? undefined : platformParam(ctx.query);
    const created = await backend.create(body, name, ctx.version, platform);
    sendJson(ctx.res, 201, warnings.length ? { ...created, Warnings: [...(created.Warnings ?? []), ...warnings] } : created);
  });

  router.get('/containers/json', async (ctx) => {
    const limit = ctx.query.int('limit');
    const list = await backend.list({
      all: ctx.query.bool('all'),
      ...(limit !== undefined && limit > 0 ? { limit } : {}),
      size: ctx.query.bool('size'),
      filters: ctx.query.filters(),
    });
    await sendJsonList(ctx.res, 200, listForVersion(list, ctx.version));
  });

  router.post('/containers/prune', async (ctx) => sendJson(ctx.res, 200, await backend.prune(ctx.query.filters())));

  router.get('/containers/{id}/json', async (ctx) => {
    const view = await backend.inspect(ctx.params.id, ctx.query.bool('size'), ctx.version);
    await sendJsonSliced(ctx.res, 200, inspectForVersion(view, ctx.version));
  });

  router.post('/containers/{id}/start', async (ctx) => {
    // Old clients sent a HostConfig here; API ≥ 1.24 forbids it (dockerd answers 400).
    const body = await readJson<unknown>(ctx.req, null);
    if (body && typeof body === 'object' && Object.keys(body).length > 0) {
      throw invalidParameter('starting container with non-empty request body was deprecated since API v1.22 and removed in v1.24');
    }
    const r = await backend.start(ctx.params.id);
    sendNoContent(ctx.res, r === 'already' ? 304 : 204);
  });

  router.post('/containers/{id}/stop', async (ctx) => {
    const r = await backend.stop(ctx.params.id, stopOpts(ctx.query, ctx.version));
    sendNoContent(ctx.res, r === 'already' ? 304 : 204);
  });

  router.post('/containers/{id}/restart', async (ctx) => {
    await backend.restart(ctx.params.id, stopOpts(ctx.query, ctx.version));
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/kill', async (ctx) => {
    const name = ctx.params.id;
    try {
      await backend.kill(name, ctx.query.string('signal') || undefined);
    } catch (err) {
      // dockerd prefixes every kill failure (404, 409, bad signal) with the reference given.
      if (err instanceof EngineError) throw new EngineError(err.code, `cannot kill container: ${name}: ${err.message}`, { cause: err });
      throw err;
    }
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/pause', async (ctx) => {
    await backend.pause(ctx.params.id);
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/unpause', async (ctx) => {
    await backend.unpause(ctx.params.id);
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/wait', async (ctx) => {
    // Before 1.30 there was no condition (not-running) and the answer came whole at the end.
    const legacy = versionLessThan(ctx.version, '1.30');
    const condition = (legacy ? 'not-running' : ctx.query.string('condition') || 'not-running') as WaitCondition;
    if (!['not-running', 'next-exit', 'removed'].includes(condition)) throw invalidParameter(`invalid condition: "${condition}"`);
    const waitFor = await backend.wait(ctx.params.id, condition);
    if (!legacy) {
      // Headers go out at once so the client knows the wait is registered (dockerd does the same).
      ctx.res.writeHead(200, { 'Content-Type': 'application/json' });
      ctx.res.flushHeaders();
    }
    const abort = new Promise<null>((resolve) => ctx.res.on('close', () => resolve(null)));
    const result = await Promise.race([waitFor(), abort]);
    if (result === null) return;
    if (legacy) {
      sendJson(ctx.res, 200, { StatusCode: result.StatusCode });
      return;
    }
    // Before 1.34 a failed removal was told by an empty answer (the client reads it as an error).
    if (condition === 'removed' && result.Error && versionLessThan(ctx.version, '1.34')) {
      ctx.res.end();
      return;
    }
    ctx.res.end(JSON.stringify(result) + '\n');
  });

  router.delete('/containers/{id}', async (ctx) => {
    await backend.remove(ctx.params.id, { force: ctx.query.bool('force'), volumes: ctx.query.bool('v'), link: ctx.query.bool('link') });
    sendNoContent(ctx.res);
  });

  // A legacy link's name is "/<parent>/<alias>": removing it by that name needs link=1.
  router.delete('/containers/{id}/{alias}', async (ctx) => {
    const name = `${ctx.params.id}/${ctx.params.alias}`;
    if (!ctx.query.bool('link')) throw notFound(`No such container: ${name}`);
    await backend.remove(name, { force: false, volumes: false, link: true });
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/rename', async (ctx) => {
    const name = ctx.query.string('name');
    if (!name) throw invalidParameter('Neither old nor new names may be empty');
    await backend.rename(ctx.params.id, name);
    sendNoContent(ctx.res);
  });

  router.post('/containers/{id}/update', async (ctx) => {
    const body = decodeBody<ContainerUpdateBody>(await readJsonObject(ctx.req), CONTAINER_UPDATE, 'UpdateConfig');
    adaptUpdateForVersion(body, ctx.version);
    sendJson(ctx.res, 200, await backend.update(ctx.params.id, body));
  });

  router.post('/containers/{id}/resize', async (ctx) => {
    // dockerd's words: `invalid resize height "abc": invalid syntax`; both are required.
    const h = ctx.query.uint32('h');
    if (typeof h === 'string') throw invalidParameter(`invalid resize height ${JSON.stringify(ctx.query.string('h') ?? '')}: ${h}`);
    const w = ctx.query.uint32('w');
    if (typeof w === 'string') throw invalidParameter(`invalid resize width ${JSON.stringify(ctx.query.string('w') ?? '')}: ${w}`);
    await backend.resize(ctx.params.id, h, w);
    ctx.res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8', 'Content-Length': 0 });
    ctx.res.end();
  });

  router.get('/containers/{id}/top', async (ctx) =>
    sendJson(ctx.res, 200, await backend.top(ctx.params.id, ctx.query.string('ps_args') ?? '-ef')),
  );

  router.get('/containers/{id}/logs', async (ctx) => {
    const q = ctx.query;
    const stdout = q.bool('stdout');
    const stderr = q.bool('stderr');
    if (!stdout && !stderr) throw invalidParameter('Bad parameters: you must choose at least one stream');
    const tailRaw = q.string('tail') ?? 'all';
    const tail = tailRaw === 'all' || tailRaw === '' ? -1 : Number(tailRaw);
    if (!Number.isInteger(tail)) throw invalidParameter(`invalid value for tail: ${JSON.stringify(tailRaw)}`);
    const since = parseTimestamp(q.string('since'), 'since');
    const until = parseTimestamp(q.string('until'), 'until');
    const req: LogsRequest = {
      follow: q.bool('follow'),
      stdout,
      stderr,
      timestamps: q.bool('timestamps'),
      tail: tail < 0 ? -1 : tail,
      ...(since !== undefined ? { since } : {}),
      ...(until !== undefined ? { until } : {}),
    };
    const abort = new AbortController();
    ctx.res.on('close', () => abort.abort());
    const { tty, lines } = await backend.logs(ctx.params.id, req, abort.signal);
    // The multiplexed media type is announced from API 1.42 (the frames are the same before).
    const muxed = !tty && !versionLessThan(ctx.version, '1.42');
    ctx.res.writeHead(200, { 'Content-Type': muxed ? 'application/vnd.docker.multiplexed-stream' : 'application/vnd.docker.raw-stream' });
    ctx.res.flushHeaders();
    const res = ctx.res;
    const drained = () => new Promise((r) => res.once('drain', r));
    if (lines.frames) {
      // The driver hands out the wire format itself, a few chunks per block of the log file, in
      // blocks it reuses once the batch before the one asked for is flushed: one batch in flight.
      const aborted = new Promise<void>((r) => abort.signal.addEventListener('abort', () => r(), { once: true }));
      let inFlight: Promise<void> = Promise.resolve();
      for await (const chunks of lines.frames({ tty, timestamps: req.timestamps })) {
        if (chunks.length === 0) continue;
        let ok = true;
        for (let i = 0; i < chunks.length - 1; i++) ok = res.write(chunks[i]) && ok;
        const flushed = new Promise<void>((r) => (ok = res.write(chunks[chunks.length - 1], () => r()) && ok));
        if (!ok) await Promise.race([drained(), aborted]);
        await Promise.race([inFlight, aborted]);
        inFlight = flushed;
        if (abort.signal.aborted) break;
      }
    } else {
      // One write per batch (a block of the log file): per-entry writes cost more than the rest of the read.
      const stamps = req.timestamps ? new TimestampPrefixes() : undefined;
      for await (const batch of lines.batches()) {
        if (batch.length === 0) continue;
        if (!res.write(logPayload(batch, tty, stamps))) await drained();
        if (abort.signal.aborted) break;
      }
    }
    ctx.res.end();
  });
}
