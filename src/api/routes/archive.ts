// Archive routes: HEAD/GET/PUT /containers/{id}/archive (docker cp) and GET /containers/{id}/changes
// (docker diff). Tars are streamed both ways, never buffered.
import type { Writable } from 'node:stream';
import { encodePathStat } from '../../daemon/archive/path-stat.ts';
import { sendJson } from '../http.ts';
import type { Router } from '../router.ts';
import type { Change, ContainerPathStat } from '../../types/archive.ts';

export interface ArchiveBackend {
  stat(ref: string, path: string): Promise<ContainerPathStat>;
  /** begin() gets the stat header value once the path is known and returns where the tar goes. */
  archive(ref: string, path: string, begin: (statHeader: string) => Writable): Promise<void>;
  extract(
    ref: string,
    path: string,
    body: AsyncIterable<Buffer>,
    opts: { noOverwriteDirNonDir: boolean; copyUIDGID: boolean },
  ): Promise<void>;
  changes(ref: string): Promise<Change[] | null>;
}

const STAT_HEADER = 'X-Docker-Container-Path-Stat';

export function registerArchiveRoutes(router: Router, backend: ArchiveBackend): void {
  router.head('/containers/{id}/archive', async (ctx) => {
    const stat = await backend.stat(ctx.params.id, ctx.query.string('path') ?? '');
    ctx.res.writeHead(200, { 'Content-Type': 'application/json', [STAT_HEADER]: encodePathStat(stat) });
    ctx.res.end();
  });

  router.get('/containers/{id}/archive', async (ctx) => {
    const { res } = ctx;
    await backend.archive(ctx.params.id, ctx.query.string('path') ?? '', (statHeader) => {
      res.writeHead(200, { 'Content-Type': 'application/x-tar', [STAT_HEADER]: statHeader });
      return res;
    });
    res.end();
  });

  router.put('/containers/{id}/archive', async (ctx) => {
    const q = ctx.query;
    await backend.extract(ctx.params.id, q.string('path') ?? '', ctx.req as AsyncIterable<Buffer>, {
      noOverwriteDirNonDir: q.bool('noOverwriteDirNonDir'),
      copyUIDGID: q.bool('copyUIDGID'),
    });
    ctx.res.writeHead(200, { 'Content-Length': '0' });
    ctx.res.end();
  });

  router.get('/containers/{id}/changes', async (ctx) => {
    sendJson(ctx.res, 200, await backend.changes(ctx.params.id));
  });
}
