// Local image routes: list, inspect, history, tag, remove, prune, save (get), load, commit, and
// container export. Parse the request → call the ImagesBackend → write JSON or a stream. Archives
// are streamed both ways; errors found before the first byte is written are real HTTP statuses.
import type { ServerResponse } from 'node:http';
import type { Writable } from 'node:stream';
import { invalidParameter, messageOf } from '../../errors.ts';
import { encodeMessage, errorMessage } from '../../images/distribution/progress.ts';
import type { ContainerConfig } from '../../types/container-api.ts';
import type { CommitOptions, ImageDeleteItem, LoadResult } from '../../types/images.ts';
import { discardUnreadBody, readJson, sendJson, sendJsonList, sendJsonSliced } from '../http.ts';
import { COMMIT_CONFIG, decodeBody } from '../body-schemas.ts';
import type { Router } from '../router.ts';
import { imageInspectForVersion, imageListForVersion } from './image-compat.ts';
import { checkImagePlatform, decodePlatform, singlePlatform } from './image-platform.ts';
import { versionLessThan } from '../../util/api-version.ts';

export interface ImagesBackend {
  /** `manifests`: each entry carries its Manifests (image-service.ts, images/manifest-summary.ts). */
  list(opts: {
    all: boolean;
    digests: boolean;
    sharedSize: boolean;
    filters: Map<string, string[]>;
    manifests: boolean;
  }): Promise<unknown[]>;
  inspect(ref: string, version: string, opts?: { manifests?: boolean }): Promise<unknown>;
  history(ref: string): Promise<unknown[]>;
  tag(ref: string, repo: string | undefined, tag: string | undefined): Promise<void>;
  remove(ref: string, opts: { force: boolean; noprune: boolean }): Promise<ImageDeleteItem[]>;
  prune(filters: Map<string, string[]>): Promise<{ ImagesDeleted: ImageDeleteItem[] | null; SpaceReclaimed: number }>;
  /** Resolves every name (404 before anything is sent), then returns the archive writer. */
  prepareSave(names: string[]): Promise<(out: Writable) => Promise<void>>;
  load(body: AsyncIterable<Uint8Array>): Promise<LoadResult>;
  commit(opts: CommitOptions): Promise<{ Id: string }>;
  prepareExport(ref: string): Promise<(out: Writable) => Promise<void>>;
}

/** Streams an archive; a failure mid-way cuts the connection so the client sees a truncated tar. */
async function sendArchive(res: ServerResponse, contentType: string, write: (out: Writable) => Promise<void>): Promise<void> {
  res.writeHead(200, { 'Content-Type': contentType });
  try {
    await write(res);
    res.end();
  } catch (err) {
    res.destroy(err as Error);
    throw err;
  }
}

export function registerImageRoutes(router: Router, backend: ImagesBackend): void {
  router.get('/images/json', async (ctx) => {
    const q = ctx.query;
    const filters = q.filters();
    // Before 1.41 a `filter` parameter (a glob of repository names) was a reference filter.
    const glob = versionLessThan(ctx.version, '1.41') ? q.string('filter') : undefined;
    if (glob) filters.set('reference', [...(filters.get('reference') ?? []), glob]);
    // shared-size exists from 1.42.
    const sharedSize = !versionLessThan(ctx.version, '1.42') && q.bool('shared-size');
    // manifests from 1.47.
    const manifests = !versionLessThan(ctx.version, '1.47') && q.bool('manifests');
    const list = await backend.list({ all: q.bool('all'), digests: q.bool('digests'), sharedSize, filters, manifests });
    await sendJsonList(ctx.res, 200, imageListForVersion(list, ctx.version));
  });

  router.get('/images/get', async (ctx) => {
    // platform from 1.48 (one at most; images here have one platform each).
    if (!versionLessThan(ctx.version, '1.48')) singlePlatform(ctx.query.strings('platform'));
    const names = ctx.query
      .strings('names')
      .flatMap((n) => n.split(','))
      .filter(Boolean);
    await sendArchive(ctx.res, 'application/x-tar', await backend.prepareSave(names));
  });

  router.post('/images/load', async (ctx) => {
    if (!versionLessThan(ctx.version, '1.48')) singlePlatform(ctx.query.strings('platform'));
    const quiet = ctx.query.bool('quiet');
    // As dockerd: once the load started, its failure is the last message of a 200 stream (clients
    // raise their load error from it), not an HTTP error.
    let lines: string;
    try {
      const result = await backend.load(ctx.req);
      lines = result.messages.map((m) => JSON.stringify({ stream: `${m}\n` }) + '\n').join('');
    } catch (err) {
      await discardUnreadBody(ctx.req);
      lines = encodeMessage(errorMessage(messageOf(err)));
    }
    ctx.res.writeHead(200, { 'Content-Type': 'application/json', 'Content-Length': Buffer.byteLength(lines) });
    void quiet; // dockerd's quiet drops the progress bars; the "Loaded image" lines are always sent
    ctx.res.end(lines);
  });

  router.post('/images/prune', async (ctx) => sendJson(ctx.res, 200, await backend.prune(ctx.query.filters())));

  router.post('/commit', async (ctx) => {
    const q = ctx.query;
    const container = q.string('container');
    if (!container) throw invalidParameter('container is required');
    const body = await readJson<ContainerConfig | null>(ctx.req, null);
    if (body !== null && (typeof body !== 'object' || Array.isArray(body)))
      throw invalidParameter('invalid JSON: expected a container config object');
    const config = body === null ? null : decodeBody<ContainerConfig>(body, COMMIT_CONFIG, 'Config');
    const opts: CommitOptions = {
      container,
      pause: q.has('pause') ? q.bool('pause') : true,
      changes: q.strings('changes').filter((c) => c.trim()),
      config,
      ...(q.string('repo') ? { repo: q.string('repo')! } : {}),
      ...(q.string('tag') ? { tag: q.string('tag')! } : {}),
      ...(q.string('comment') ? { comment: q.string('comment')! } : {}),
      ...(q.string('author') ? { author: q.string('author')! } : {}),
    };
    sendJson(ctx.res, 201, await backend.commit(opts));
  });

  router.get('/containers/{id}/export', async (ctx) => {
    await sendArchive(ctx.res, 'application/x-tar', await backend.prepareExport(ctx.params.id));
  });

  router.get('/images/{name*}/json', async (ctx) => {
    // manifests from 1.48, platform from 1.49.
    const manifests = !versionLessThan(ctx.version, '1.48') && ctx.query.bool('manifests');
    const raw = ctx.query.string('platform');
    const platform = raw && !versionLessThan(ctx.version, '1.49') ? decodePlatform(raw) : undefined;
    if (manifests && platform) throw invalidParameter('conflicting options: manifests and platform options cannot both be set');
    const view = await backend.inspect(ctx.params.name, ctx.version, manifests ? { manifests } : undefined);
    if (platform) checkImagePlatform(ctx.params.name, view as Record<string, unknown>, platform);
    await sendJsonSliced(ctx.res, 200, imageInspectForVersion(view, ctx.version));
  });

  router.get('/images/{name*}/history', async (ctx) => {
    // platform from 1.48: the image must be of it.
    const raw = versionLessThan(ctx.version, '1.48') ? undefined : ctx.query.string('platform');
    if (raw)
      checkImagePlatform(
        ctx.params.name,
        (await backend.inspect(ctx.params.name, ctx.version)) as Record<string, unknown>,
        decodePlatform(raw),
      );
    await sendJsonSliced(ctx.res, 200, await backend.history(ctx.params.name));
  });

  router.get('/images/{name*}/get', async (ctx) => {
    if (!versionLessThan(ctx.version, '1.48')) singlePlatform(ctx.query.strings('platform'));
    await sendArchive(ctx.res, 'application/x-tar', await backend.prepareSave([ctx.params.name]));
  });

  router.post('/images/{name*}/tag', async (ctx) => {
    await backend.tag(ctx.params.name, ctx.query.string('repo') || undefined, ctx.query.string('tag') || undefined);
    ctx.res.writeHead(201, { 'Content-Length': 0 });
    ctx.res.end();
  });

  router.delete('/images/{name*}', async (ctx) => {
    // platforms from 1.50: each must decode (images here have one platform each).
    if (!versionLessThan(ctx.version, '1.50')) for (const p of ctx.query.strings('platforms')) decodePlatform(p);
    sendJson(ctx.res, 200, await backend.remove(ctx.params.name, { force: ctx.query.bool('force'), noprune: ctx.query.bool('noprune') }));
  });
}
