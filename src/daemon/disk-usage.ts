// GET /system/df: what images, containers, volumes and the build cache take on disk, in the shape
// API 1.51 answers (LayersSize and the four lists). Each part is computed only when asked for.
import type { DiskUsageKinds, DiskUsageView } from '../types/system-df.ts';
import type { VolumeView } from '../types/volumes.ts';
import type { BuildCacheEntry, BuildPruneOptions, BuildPruneResult } from '../types/build.ts';

/** The classic builder's cache (build/service.ts), as /system/df and /build/prune see it. */
export interface BuildCacheUsage {
  diskUsage(): Promise<BuildCacheEntry[]>;
  prune(opts: BuildPruneOptions): Promise<BuildPruneResult>;
}

export interface DiskUsageDeps {
  images: { diskUsage(): Promise<{ layersSize: number; images: Array<Record<string, unknown>> }> };
  containers: { list(opts: { all: boolean; size: boolean; filters: Map<string, string[]> }): Promise<unknown[]> };
  /** Volumes with UsageData {Size, RefCount}; absent until the volumes service exists. */
  volumes?: () => Promise<VolumeView[]>;
  buildCache: BuildCacheUsage;
}

export class DiskUsageService {
  constructor(private readonly d: DiskUsageDeps) {}

  async usage(kinds: DiskUsageKinds): Promise<DiskUsageView> {
    const [images, containers, volumes, buildCache] = await Promise.all([
      kinds.images || kinds.containers ? this.d.images.diskUsage() : undefined,
      kinds.containers ? this.d.containers.list({ all: true, size: true, filters: new Map() }) : undefined,
      kinds.volumes ? (this.d.volumes?.() ?? Promise.resolve([])) : undefined,
      kinds.buildCache ? this.d.buildCache.diskUsage() : undefined,
    ]);
    const out: DiskUsageView = {};
    if (images && kinds.images) {
      out.LayersSize = images.layersSize;
      out.Images = images.images;
    }
    if (containers) {
      // SizeRootFs is the writable layer plus the image's unpacked layers (what Images[].Size
      // counts), so the two lists add up the way the CLI's reclaimable figures assume.
      const imageSize = new Map(images!.images.map((i) => [i.Id as string, i.Size as number]));
      // The container list's entries are ContainerSummary objects (typed as unknown there).
      const list = containers as Array<Record<string, unknown>>;
      for (const c of list) {
        const unpacked = imageSize.get(c.ImageID as string);
        if (unpacked !== undefined && typeof c.SizeRw === 'number') c.SizeRootFs = c.SizeRw + unpacked;
      }
      out.Containers = list;
    }
    if (volumes) out.Volumes = volumes;
    if (buildCache) out.BuildCache = buildCache;
    return out;
  }

  /** POST /build/prune. */
  pruneBuildCache(opts: BuildPruneOptions): Promise<BuildPruneResult> {
    return this.d.buildCache.prune(opts);
  }
}
