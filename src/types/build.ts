// Wire types of the classic builder API: POST /build query options (as parsed by the route), the
// JSON stream messages, POST /build/prune's answer and the BuildCache entries of /system/df.

export interface Ulimit {
  Name: string;
  Soft: number;
  Hard: number;
}

/** POST /build's options once decoded from the query string. */
export interface BuildOptions {
  /** Path of the Dockerfile inside the context ("Dockerfile" by default). */
  dockerfile: string;
  tags: string[];
  quiet: boolean;
  noCache: boolean;
  cacheFrom: string[];
  pull: boolean;
  /** Remove intermediate containers after a successful step (default true). */
  remove: boolean;
  /** Always remove intermediate containers, even after a failed step. */
  forceRemove: boolean;
  memory?: number;
  memorySwap?: number;
  cpuShares?: number;
  cpusetCpus?: string;
  cpuPeriod?: number;
  cpuQuota?: number;
  shmSize?: number;
  ulimits: Ulimit[];
  /** null: `--build-arg NAME` with NAME unset in the client (not given). */
  buildArgs: Record<string, string | null>;
  labels: Record<string, string>;
  networkMode: string;
  extraHosts: string[];
  platform?: string;
  target?: string;
  /** A URL to fetch the context from instead of the request body. */
  remote?: string;
  /** The client's session/build ID (`buildid`), for POST /build/cancel. */
  buildId?: string;
  /** X-Registry-Config: registry host → credentials, for base image pulls. */
  registryAuth: Record<
    string,
    { username?: string; password?: string; auth?: string; identitytoken?: string; registrytoken?: string; serveraddress?: string }
  >;
}

/** One line of the build's JSON stream. */
export interface BuildMessage {
  stream?: string;
  status?: string;
  id?: string;
  progressDetail?: { current?: number; total?: number };
  progress?: string;
  aux?: { ID: string };
  errorDetail?: { code?: number; message: string };
  error?: string;
}

export type BuildSink = (m: BuildMessage) => void;

/** POST /build/prune's query options. */
export interface BuildPruneOptions {
  all: boolean;
  /** Bytes of cache to keep (0: no limit). */
  keepStorage: number;
  filters: Map<string, string[]>;
}

export interface BuildPruneResult {
  CachesDeleted: string[] | null;
  SpaceReclaimed: number;
}

/** One BuildCache entry of GET /system/df. */
export interface BuildCacheEntry {
  ID: string;
  Parent?: string;
  Parents?: string[];
  Type: string;
  Description: string;
  InUse: boolean;
  Shared: boolean;
  Size: number;
  CreatedAt: string;
  LastUsedAt: string | null;
  UsageCount: number;
}
