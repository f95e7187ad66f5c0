// Docker Engine API wire types for GET /version and GET /info as the daemon writes them: the
// generated API types (api/) as Go's encoding/json writes them (go-nil.ts), plus what older API
// versions still had (the router puts those back for older clients, api/routes/system-compat.ts).
import type { Commit, RegistryServiceConfig, Runtime, SystemInfo, SystemVersion } from './api/index.ts';
import type { ClusterObject } from './cluster.ts';
import type { GoJson } from './go-nil.ts';

/** GET /version. */
export type SystemVersionView = GoJson<SystemVersion>;

/**
 * A runtime of /info: the description's legacy runc-compatible form (path, runtimeArgs) or, as
 * dockerd's system.Runtime also has it, a shim v2 runtime (runtimeType, options).
 */
export type InfoRuntime = GoJson<Runtime> & { runtimeType?: string; options?: Record<string, unknown> | null };

/**
 * GET /info at the current API version. Swarm is the cluster's own object (the SwarmInfo shape,
 * typed by the cluster as a plain object). KernelMemory is not in the current API description but
 * is still sent when true, as dockerd does; the router drops it from API 1.42.
 */
export type SystemInfoView = Omit<GoJson<SystemInfo>, 'Swarm' | 'Runtimes'> & {
  Swarm?: ClusterObject;
  Runtimes?: Record<string, InfoRuntime> | null;
  KernelMemory?: boolean;
};

/** A commit as /info showed it before API 1.49 (Expected equal to ID). */
export type LegacyCommit = GoJson<Commit> & { Expected?: string };

/** RegistryConfig as /info showed it before API 1.47 (the non-distributable artifact lists). */
export type LegacyRegistryConfig = GoJson<RegistryServiceConfig> & {
  AllowNondistributableArtifactsCIDRs?: string[] | null;
  AllowNondistributableArtifactsHostnames?: string[] | null;
};

/** GET /info for a client of any API version: the current fields and those older versions had. */
export type VersionedInfo = Omit<SystemInfoView, 'RegistryConfig' | 'ContainerdCommit' | 'RuncCommit' | 'InitCommit'> & {
  RegistryConfig?: LegacyRegistryConfig | null;
  ContainerdCommit?: LegacyCommit;
  RuncCommit?: LegacyCommit;
  InitCommit?: LegacyCommit;
  /** Before API 1.50 (always false from 1.40 on). */
  BridgeNfIptables?: boolean;
  BridgeNfIp6tables?: boolean;
};
