// What the daemon's services are, by name: the registry the composition root's registrations fill
// (see compose.ts for the list and util/service-runner.ts for how they start and stop). The first
// four are given by engined.ts (the seed); every other entry is one registration's value.
import type { LoadedConfig } from '../../config/daemon-config.ts';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import type { EnvironmentSwitches } from '../../config/environment.ts';
import type { ApiServer } from '../../api/server.ts';
import type { OpenListener } from '../../api/listeners.ts';
import type { EventBus } from '../../events/bus.ts';
import type { ArchiveService } from '../../daemon/archive/service.ts';
import type { RootfsManager } from '../../daemon/containers/fs/rootfs.ts';
import type { ContainerRecord } from '../../daemon/containers/record.ts';
import type { ContainerRunEvents } from '../../daemon/containers/run-events.ts';
import type { ContainerService } from '../../daemon/containers/service.ts';
import type { TaskLauncher } from '../../daemon/containers/run/task-launcher.ts';
import type { ExecRegistry } from '../../daemon/exec/registry.ts';
import type { ExecService } from '../../daemon/exec/service.ts';
import type { HealthMonitor } from '../../daemon/health/monitor.ts';
import type { ConsoleServer } from '../../api/console-server.ts';
import type { EngineMetrics } from '../../daemon/metrics/engine-metrics.ts';
import type { RuntimeRegistry } from '../../daemon/runtimes.ts';
import type { StatsService } from '../../daemon/stats/service.ts';
import type { SystemService } from '../../daemon/system.ts';
import type { VolumeRecord, VolumeService } from '../../daemon/volumes/service.ts';
import type { DistributionService } from '../../images/distribution/service.ts';
import type { ImageService } from '../../images/image-service.ts';
import type { ImageStore } from '../../images/image-store.ts';
import type { CdiRegistry } from '../../oci/cdi.ts';
import type { CgroupDriver } from '../../oci/cgroups.ts';
import type { IdentityMap } from '../../oci/userns.ts';
import type { ContainerStore } from '../../store/containers.ts';
import type { EngineDatabase } from '../../store/database.ts';
import type { RecordTable } from '../../store/kv.ts';
import type { ManagedStart } from '../../supervisor/containerd-process.ts';
import type { RunningSnapshotter } from '../../supervisor/snapshotter/start.ts';
import type { Supervisor } from '../../supervisor/supervisor.ts';
import type { Logger } from '../../util/log.ts';
import type { Registration } from '../../util/service-runner.ts';
import type { BuildBackend } from '../../api/routes/build.ts';
import type { BuildCacheUsage } from '../../daemon/disk-usage.ts';
import type { Networking } from '../compose-network.ts';
import type { LazyClusterService } from '../cluster-lazy.ts';
import type { LazyPluginManager } from '../plugins-lazy.ts';
import type { RequestDrain } from './request-drain.ts';

export interface DaemonOptions {
  loaded: () => LoadedConfig;
  log: Logger;
  roots: { dataRoot: string; execRoot: string; tmpDir: string };
  startedAt: Date;
  /** Our containerd, already starting (engined.ts spawns it before loading the composition root). */
  containerd?: ManagedStart;
  /** The fuse-overlayfs driver's snapshotter server (engined.ts starts it before containerd). */
  snapshotServer?: RunningSnapshotter;
  /** --userns-remap in force (resolved by engined.ts; roots.dataRoot is then the `<uid>.<gid>` tree). */
  userns?: IdentityMap;
}

export interface Services {
  // The seed.
  options: DaemonOptions;
  log: Logger;
  config: () => DaemonConfig;
  env: EnvironmentSwitches;
  // Foundation.
  cgroupDriver: CgroupDriver;
  db: EngineDatabase;
  drain: RequestDrain;
  events: EventBus;
  engineId: string;
  // Cluster mode and networking.
  cluster: LazyClusterService;
  networking: Networking;
  // containerd and images.
  snapshotServer: RunningSnapshotter | undefined;
  supervisor: Supervisor;
  images: ImageStore;
  imagesWarm: { done: Promise<unknown> };
  snapshotter: string;
  distribution: DistributionService;
  // Plugins and volumes.
  containerStore: ContainerStore<ContainerRecord>;
  volumeTable: RecordTable<VolumeRecord>;
  plugins: LazyPluginManager;
  volumes: VolumeService;
  // Containers.
  limits: { noCgroups: boolean; warnings: string[] };
  runtimes: RuntimeRegistry;
  rootfs: RootfsManager;
  cdi: CdiRegistry;
  launcher: TaskLauncher;
  runs: ContainerRunEvents;
  execRegistry: ExecRegistry;
  containers: ContainerService;
  clusterTasks: void;
  archives: ArchiveService;
  execs: ExecService;
  metrics: EngineMetrics | undefined;
  health: HealthMonitor;
  imageService: ImageService;
  builder: BuildBackend & BuildCacheUsage;
  restore: void;
  // The API.
  system: SystemService;
  stats: StatsService;
  api: ApiServer;
  listeners: OpenListener[];
  metricsServer: { close(): Promise<void> } | undefined;
  console: ConsoleServer | undefined;
  heapTrimmer: { stop(): void };
}

/** A registration of one of the daemon's services. */
export type DaemonService<K extends keyof Services = keyof Services> = Registration<Services, K>;
