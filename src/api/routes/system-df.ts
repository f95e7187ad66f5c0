// GET /system/df (with API 1.42's `type` selection) and POST /build/prune, which `docker system
// prune` calls along with the container, network, image and volume prunes.
import { invalidParameter } from '../../errors.ts';
import { sendJson } from '../http.ts';
import type { Router } from '../router.ts';
import type { DiskUsageKinds } from '../../types/system-df.ts';
import { versionLessThan } from '../../util/api-version.ts';
import type { BuildPruneOptions, BuildPruneResult } from '../../types/build.ts';

export interface DiskUsageBackend {
  usage(kinds: DiskUsageKinds): Promise<Record<string, unknown>>;
  pruneBuildCache(opts: BuildPruneOptions): Promise<BuildPruneResult>;
}

const KIND_NAMES: Record<string, keyof DiskUsageKinds> = {
  container: 'containers',
  image: 'images',
  volume: 'volumes',
  'build-cache': 'buildCache',
};

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
    sendJson(ctx.res, 200, await backend.usage(kinds));
  });
  router.post('/build/prune', async (ctx) => {
    // keep-storage (bytes); API 1.48's max-used-space means the same for this cache.
    const keepStorage = ctx.query.int('keep-storage') ?? ctx.query.int('max-used-space') ?? 0;
    if (keepStorage < 0) throw invalidParameter('keep-storage must not be negative');
    sendJson(ctx.res, 200, await backend.pruneBuildCache({ all: ctx.query.bool('all'), keepStorage, filters: ctx.query.filters() }));
  });
}
