// Docker Engine API wire types for GET /containers/{id}/json and GET /containers/json as the daemon
// writes them: the generated ContainerInspectResponse and ContainerSummary (api/) as Go's
// encoding/json writes them (go-nil.ts).
import type { ContainerInspectResponse, ContainerSummary, HostConfig } from './api/index.ts';
import type { GoJson } from './go-nil.ts';

/**
 * Inspect's HostConfig: dockerd's struct with every field present (zero values, nil lists and
 * maps as null). KernelMemory is not in the current API description; dockerd still sends it when
 * set (omitempty), and the router drops it from API 1.42.
 */
export type HostConfigView = GoJson<HostConfig> & { KernelMemory?: number };

/** GET /containers/{id}/json at the current API version. */
export type ContainerInspectView = Omit<GoJson<ContainerInspectResponse>, 'HostConfig'> & { HostConfig?: HostConfigView };

/** A GET /containers/json entry at the current API version. */
export type ContainerSummaryView = GoJson<ContainerSummary>;
