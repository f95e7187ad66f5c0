// What the containers service is built from (the daemon's stores, clients and other services), as
// ContainerService receives it; each part takes the few of these it uses (a Pick of this type).
import type { DaemonConfig } from '../../config/daemon-config.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { ImageStore } from '../../images/image-store.ts';
import type { LogPluginTransport } from '../../logging/index.ts';
import type { ContainerNetworks } from '../../network/container-contract.ts';
import type { CdiRegistry } from '../../oci/cdi.ts';
import type { ContainerStore } from '../../store/containers.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { RuntimeRegistry } from '../runtimes.ts';
import type { ContainerVolumes } from '../volumes/contract.ts';
import type { ContainerRecord } from './record.ts';
import type { RootfsManager } from './fs/rootfs.ts';
import type { ContainerRunEvents } from './run-events.ts';
import type { TaskLauncher } from './run/task-launcher.ts';

export interface ContainerServiceDeps {
  client: SupervisorClient;
  images: ImageStore;
  store: ContainerStore<ContainerRecord>;
  rootfs: RootfsManager;
  runtimes: RuntimeRegistry;
  launcher: TaskLauncher;
  config: () => DaemonConfig;
  log: Logger;
  containersDir: string;
  shmSize: number;
  /** The events stream (create, start, die, …); optional so tests can leave it out. */
  events?: EventPublisher;
  /** Container networking; without it containers get loopback only (and a stand-in NetworkSettings). */
  networks?: ContainerNetworks;
  /** Named and anonymous volumes; without it, volume mounts are refused at start. */
  volumes?: Pick<ContainerVolumes, 'check' | 'prepare' | 'release'>;
  /** CDI devices (DeviceRequests with Driver "cdi"); without it such requests are refused. */
  cdi?: Pick<CdiRegistry, 'resolve'>;
  /** Where runs are announced (health checks and exec clean-up follow them). */
  runs?: ContainerRunEvents;
  /** Inspect's ExecIDs: the exec registry (daemon/exec/registry.ts); none without it. */
  execs?: ContainerExecs;
  /** Log-driver plugins by name (discovered or managed, implementing LogDriver); none without it. */
  logPlugins?: (name: string) => Promise<LogPluginTransport>;
  /** Where the FIFOs to log plugins are made (dockerd: /run/docker/logging). */
  logFifoDir?: string;
}

/** What inspect needs from the exec instances. */
export interface ContainerExecs {
  idsOf(containerId: string): string[];
}

export type { ContainerNetworks };

/**
 * What the runs (run/lifecycle.ts and its parts, run/restore.ts) use of the daemon: containerd and
 * the launcher, what a removal frees (AutoRemove), the run events.
 */
export type RunDeps = Pick<
  ContainerServiceDeps,
  'client' | 'containersDir' | 'launcher' | 'log' | 'networks' | 'rootfs' | 'runs' | 'store' | 'volumes'
>;
