// Docker Engine API wire types for GET /system/df: which parts of the answer were asked for
// (API 1.42's `type` query), and the answer.
import type { BuildCacheEntry } from './build.ts';
import type { VolumeView } from './volumes.ts';

export interface DiskUsageKinds {
  containers: boolean;
  images: boolean;
  volumes: boolean;
  buildCache: boolean;
}

/**
 * GET /system/df as the daemon writes it (API 1.51's SystemDataUsageResponse), each list present
 * only when asked for. Images and Containers are the image and container lists' entries as those
 * services give them (ImageSummary and ContainerSummary objects, still untyped there); BuildCache
 * entries carry Parent too, which the router drops from API 1.42 (Parents before).
 */
export interface DiskUsageView {
  LayersSize?: number;
  Images?: Record<string, unknown>[];
  Containers?: Record<string, unknown>[];
  Volumes?: VolumeView[];
  BuildCache?: BuildCacheEntry[];
}

/** /system/df for a client of any API version: before 1.42 the build cache's total (BuilderSize). */
export interface VersionedDiskUsage extends DiskUsageView {
  BuilderSize?: number;
}
