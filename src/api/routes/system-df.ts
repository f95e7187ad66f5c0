// GET /system/df (with API 1.42's `type` selection) and POST /build/prune, which `docker system
// prune` calls along with the container, network, image and volume prunes.
import { invalidParameter } from '../../errors.ts';
import { sendJson } from '../http.ts';
import type { Router } from '../router.ts';
import type { DiskUsageKinds, DiskUsageView, VersionedDiskUsage } from '../../types/system-df.ts';
import { versionLessThan } from '../../util/api-version.ts';
import type { BuildPruneOptions, BuildPruneResult } from '../../types/build.ts';

export interface DiskUsageBackend {
  usage(kinds: DiskUsageKinds): Promise<DiskUsageView>;
  pruneBuildCache(opts: BuildPruneOptions): Promise<BuildPruneResult>;
}

const KIND_NAMES: Record<string, keyof DiskUsageKinds> = {
  container: 'containers',
  image: 'images',
  volume: 'volumes',
  'build-cache': 'buildCache',
};

/**
 * /system/df for a client of API `version`, as dockerd's system router: before 1.42 build cache
 * entries have no Parents and the cache's total is BuilderSize; from 1.42 no Parent; before 1.44
 * images carry VirtualSize. The backend's answer is copied, never changed.
 */
export function usageForVersion(du: DiskUsageView, version: string): VersionedDiskUsage {
  const out: VersionedDiskUsage = { ...du };
  const cache = du.BuildCache;
  if (cache) {
    if (versionLessThan(version, '1.42')) {
      out.BuildCache = cache.map(({ Parents: _parents, ...rest }) => rest);
      const total = cache.reduce((n, b) => n + b.Size, 0);
      if (total) out.BuilderSize = total;
    } else out.BuildCache = cache.map(({ Parent: _parent, ...rest }) => rest);
  }
  const images = du.Images;
  if (images && versionLessThan(version, '1.44')) out.Images = images.map((i) => ({ ...i, VirtualSize: i.Size }));
  return out;
}

export function registerSystemDfRoutes(router: Router, backend: DiskUsageBackend): void {
  router.get('/system/df', async (ctx) => {
    const types = ctx.query.strings('type');
    let kinds: DiskUsageKinds = { containers: true, images: true, volumes: true, buildCache: true };
    if (types.length && !versionLessThan(ctx.version, '1.42')) {
      kinds = { containers: false, images: false, volumes: false, buildCache: false };
      for (const t of types) {
        const k = KIND_NAMES[t];
        if (!k) throw invalidParameter(`unknown object type: ${t}`);
        kinds[k] = true;
      }
    }
    sendJson(ctx.res, 200, usageForVersion(await backend.usage(kinds), ctx.version));
  });
  router.post('/build/prune', async (ctx) => {
    // Before API 1.48 only keep-storage (bytes); from 1.48 reserved-space, else the deprecated
    // keep-storage, and max-used-space, which means the same for this cache.
    const q = ctx.query;
    const keepStorage = versionLessThan(ctx.version, '1.48')
      ? (q.int('keep-storage') ?? 0)
      : q.int('reserved-space') || q.int('keep-storage') || q.int('max-used-space') || 0;
    if (keepStorage < 0) throw invalidParameter('keep-storage must not be negative');
    sendJson(ctx.res, 200, await backend.pruneBuildCache({ all: ctx.query.bool('all'), keepStorage, filters: ctx.query.filters() }));
  });
}
