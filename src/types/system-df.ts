// Docker Engine API wire types for GET /system/df: which parts of the answer were asked for
// (API 1.42's `type` query).

export interface DiskUsageKinds {
  containers: boolean;
  images: boolean;
  volumes: boolean;
  buildCache: boolean;
}
