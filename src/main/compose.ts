// The composition root: the daemon's services, in the order a reader takes them in. Each entry is a
// registration (services/*.ts) saying what the service needs and how it starts and stops; the
// runner (util/service-runner.ts) builds each as soon as what it requires is ready and stops them
// in reverse. This is the only module, with services/, that may import from every layer (see
// ARCHITECTURE.md).
import { readEnvironment } from '../config/environment.ts';
import { publishDaemonEvent, reloadAttributes } from '../events/daemon-events.ts';
import { startServices } from '../util/service-runner.ts';
import { startupMark } from '../util/startup-trace.ts';
import {
  apiService,
  consoleService,
  heapTrimmerService,
  listenersService,
  metricsServerService,
  metricsService,
  statsService,
  systemService,
} from './services/api.ts';
import { clusterService, clusterTasksService, networkingService } from './services/cluster-and-network.ts';
import * as containers from './services/containers.ts';
import { cgroupDriverService, dbService, drainService, engineIdService, eventsService } from './services/foundation.ts';
import { builderService, imageServiceService } from './services/images.ts';
import {
  distributionService,
  imagesService,
  imagesWarmService,
  snapshotServerService,
  snapshotterService,
  supervisorService,
} from './services/supervision.ts';
import type { DaemonOptions, DaemonService, Services } from './services/types.ts';
import * as storage from './services/volumes-and-plugins.ts';

export type { DaemonOptions };

/** Start order (ties after `requires`); shutdown runs it backwards. */
export const DAEMON_SERVICES: readonly DaemonService[] = [
  // The store first, then the drain so that shutdown waits for requests only after event streams end.
  cgroupDriverService,
  dbService,
  drainService,
  eventsService,
  engineIdService,
  // containerd boots while networking comes back: neither needs the other.
  snapshotServerService,
  supervisorService,
  clusterService,
  networkingService,
  imagesService,
  imagesWarmService,
  snapshotterService,
  distributionService,
  storage.containerStoreService,
  storage.volumeTableService,
  storage.pluginsService,
  storage.volumesService,
  containers.limitsService,
  containers.runtimesService,
  containers.rootfsService,
  containers.cdiService,
  containers.launcherService,
  containers.runsService,
  containers.execRegistryService,
  containers.containersService,
  clusterTasksService,
  containers.archivesService,
  containers.execsService,
  metricsService,
  containers.healthService,
  imageServiceService,
  builderService,
  containers.restoreService,
  systemService,
  statsService,
  apiService,
  consoleService,
  listenersService,
  metricsServerService,
  heapTrimmerService,
];

export interface RunningDaemon {
  addresses: string[];
  reloaded(changed: string[]): void;
  shutdown(): Promise<void>;
}

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { log } = opts;
  const config = () => opts.loaded().config;
  const seed: Partial<Services> = { options: opts, log, config, env: readEnvironment() };
  const running = await startServices(DAEMON_SERVICES, seed, {
    report: (message) => log.error(`shutdown step failed: ${message}`),
    ready: startupMark,
  });
  return {
    addresses: running.get('listeners').map((l) => l.address),
    reloaded(changed: string[]) {
      const c = config();
      if (changed.includes('debug') || changed.includes('log-level')) log.configure({ level: c['log-level'] });
      if (changed.includes('runtimes')) running.get('runtimes').reload(c.runtimes);
      publishDaemonEvent(running.get('events'), running.get('engineId'), 'reload', reloadAttributes(c));
    },
    shutdown: () => running.stop(),
  };
}
