// The contract between the network layer and containers, declared here (the lower layer) so that
// network/ never imports daemon/: what networking reads of a container record, how it finds one,
// and the two faces it offers the containers service (create/remove/views) and the task launcher
// (a run's sandbox, /etc/hosts entries, link variables).
import type { ContainerConfig, HostConfig, NetworkingConfig } from '../types/container-api.ts';
import type { DnsSettings } from './sandbox/etc-files.ts';
import type { EndpointView, NetworkSettingsView } from '../types/networks.ts';
import type { Port } from '../types/api/index.ts';

/** The fields of a container record networking reads (daemon/containers/record.ts satisfies it). */
/** A container's networking as clients see it (views.ts builds it). */
export interface NetworkView {
  /** NetworkSettings for inspect. */
  settings: NetworkSettingsView;
  /** The list entry's NetworkSettings.Networks and Ports. */
  summaryNetworks: Record<string, EndpointView>;
  ports: Port[];
}

export interface NetContainer {
  Id: string;
  /** With the leading slash. */
  Name: string;
  /** The generated /etc/hosts ('' when the daemon did not write one). */
  HostsPath: string;
  Config: ContainerConfig;
  HostConfig: HostConfig;
  State: { Running: boolean };
}

/** Containers by ID, unique prefix or name (the containers service); throws the 404. */
export interface ContainerLookup {
  find(ref: string): NetContainer;
}

/** What the task launcher gets back for a container's run. */
export interface SandboxInfo {
  netnsPath: string;
  /** The container's addresses (for its /etc/hosts). */
  addresses: string[];
  /** resolv.conf settings when the embedded DNS serves the container. */
  dns?: DnsSettings;
}

/** What the task launcher asks of networking around each run. */
export interface RunNetworking {
  /** The container's namespace, veths, addresses and published ports; rolled back on failure. */
  setupSandbox(rec: NetContainer): Promise<SandboxInfo>;
  /** Releases all of it. */
  teardownSandbox(id: string): Promise<void>;
  /** /etc/hosts lines for --add-host and legacy links. */
  extraHosts(rec: NetContainer): string[];
  /** The legacy --link environment variables. */
  linkEnvironment(rec: NetContainer): string[];
}

/** What the containers service asks of networking at create, remove, inspect and list. */
export interface ContainerNetworks {
  validateCreate(hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): string[];
  containerCreated(id: string, hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): void;
  containerRemoved(id: string): Promise<void>;
  containerView(rec: NetContainer): NetworkView;
  /** Changes whenever what containerView(rec) answers may have (networks or the container's facts written). */
  viewGeneration(rec: NetContainer): string;
  networksOf(rec: NetContainer): string[];
}
