// Containers and what runs beside them: runtimes, root file systems, CDI, the task launcher, the
// containers service, archives, exec, health, and the restore that reconciles them with containerd
// after a start. Container runs are announced on `runs` (health checks and exec clean-up subscribe);
// inspect's ExecIDs come from the exec registry: both exist before the services on either side.
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { parseSize } from '../../config/values.ts';
import { ArchiveService } from '../../daemon/archive/service.ts';
import type { ContainerRecord } from '../../daemon/containers/record.ts';
import { RootfsManager } from '../../daemon/containers/fs/rootfs.ts';
import { BtrfsSizeLimit, layerSizeLimit } from '../../daemon/containers/fs/layer-size.ts';
import { snapshotterRoot } from '../../daemon/storage-host.ts';
import { ContainerRunEvents } from '../../daemon/containers/run-events.ts';
import { ContainerService } from '../../daemon/containers/service.ts';
import { TaskLauncher } from '../../daemon/containers/run/task-launcher.ts';
import { ExecRegistry } from '../../daemon/exec/registry.ts';
import { ExecService } from '../../daemon/exec/service.ts';
import { HealthMonitor } from '../../daemon/health/monitor.ts';
import { RuntimeRegistry } from '../../daemon/runtimes.ts';
import { CdiRegistry } from '../../oci/cdi.ts';
import { cgroupsDelegated } from '../../oci/cgroups.ts';
import { usesRemap } from '../../oci/userns.ts';
import { PluginRegistry } from '../../plugins/registry.ts';
import type { DaemonService } from './types.ts';

const containersDir = (dataRoot: string) => join(dataRoot, 'containers');
const shmSize = (config: () => DaemonConfig) => parseSize(config()['default-shm-size']);
/** The CDI spec directories in force (none with features.cdi=false); read again when they change. */
export const cdiSpecDirs = (config: () => DaemonConfig) => () => (config().features?.cdi === false ? [] : config()['cdi-spec-dirs']);

/** Rootless: cgroups only where delegated to the user (cgroup v2); otherwise limits are refused. */
export const limitsService: DaemonService<'limits'> = {
  id: 'limits',
  init: ({ config, log }) => {
    const noCgroups = config().rootless && !cgroupsDelegated();
    const warnings = noCgroups
      ? [
          'Running in rootless mode without cgroups: resource limits are refused. To enable cgroups in rootless mode, boot the host with cgroup v2 and delegate controllers to the user.',
        ]
      : [];
    for (const w of warnings) log.warn(w);
    return { noCgroups, warnings };
  },
};

export const runtimesService: DaemonService<'runtimes'> = {
  id: 'runtimes',
  init: ({ options, config }) => new RuntimeRegistry(options.roots.execRoot, config().runtimes),
};

export const rootfsService: DaemonService<'rootfs'> = {
  id: 'rootfs',
  requires: ['supervisor', 'snapshotter'],
  init: async ({ supervisor, snapshotter, options, config }) => {
    const c = config();
    // Containers' --storage-opt as the driver takes them; btrfs.min_space turns quotas on at start, as dockerd.
    const root = supervisor.managed ? snapshotterRoot(options.roots.dataRoot, snapshotter) : undefined;
    const limit = layerSizeLimit(c['storage-driver'], c['storage-opts'], root);
    if (limit instanceof BtrfsSizeLimit && limit.enabled) await limit.enableQuota();
    return new RootfsManager(supervisor.client, snapshotter, options.roots.tmpDir, options.userns, limit);
  },
};

export const cdiService: DaemonService<'cdi'> = {
  id: 'cdi',
  init: ({ config }) => new CdiRegistry(cdiSpecDirs(config)),
};

export const launcherService: DaemonService<'launcher'> = {
  id: 'launcher',
  requires: ['supervisor', 'rootfs', 'runtimes', 'networking', 'volumes', 'cgroupDriver', 'limits'],
  init: ({ supervisor, rootfs, runtimes, config, log, options, cgroupDriver, networking, volumes, limits }) =>
    new TaskLauncher({
      client: supervisor.client,
      rootfs,
      runtimes,
      config,
      log: log.child({ module: 'containers' }),
      execRoot: options.roots.execRoot,
      runcRoot: supervisor.runcRoot,
      containersDir: containersDir(options.roots.dataRoot),
      tmpDir: options.roots.tmpDir,
      cgroupDriver,
      shmSize: shmSize(config),
      networks: networking.run,
      volumes,
      ...(options.userns ? { userns: options.userns } : {}),
      ...(limits.noCgroups ? { noCgroups: true } : {}),
    }),
};

export const runsService: DaemonService<'runs'> = {
  id: 'runs',
  init: ({ log }) => new ContainerRunEvents(log.child({ module: 'containers' })),
};

export const execRegistryService: DaemonService<'execRegistry'> = {
  id: 'execRegistry',
  init: () => new ExecRegistry(),
};

export const containersService: DaemonService<'containers'> = {
  id: 'containers',
  requires: [
    'supervisor',
    'images',
    'containerStore',
    'rootfs',
    'runtimes',
    'launcher',
    'events',
    'networking',
    'volumes',
    'cdi',
    'runs',
    'execRegistry',
    'plugins',
  ],
  init: async (d) => {
    const dir = containersDir(d.options.roots.dataRoot);
    await mkdir(dir, { recursive: true, mode: 0o710 });
    // Remapped containers reach their /etc/hosts & co. through the group (dockerd's 0710 root:<gid>).
    if (d.options.userns) await chown(dir, process.getuid!(), d.options.userns.rootGid);
    // Log-driver plugins: discovered or managed, implementing LogDriver (dockerd's patience with a starting plugin).
    const logPlugins = new PluginRegistry({ activationBudgetMs: 10_000, managed: d.plugins });
    return new ContainerService({
      client: d.supervisor.client,
      images: d.images,
      store: d.containerStore,
      rootfs: d.rootfs,
      runtimes: d.runtimes,
      launcher: d.launcher,
      config: d.config,
      log: d.log.child({ module: 'containers' }),
      containersDir: dir,
      shmSize: shmSize(d.config),
      events: d.events,
      networks: d.networking.containers,
      volumes: d.volumes,
      cdi: d.cdi,
      runs: d.runs,
      execs: d.execRegistry,
      logPlugins: (name) => logPlugins.get(name, 'LogDriver'),
      logFifoDir: join(d.options.roots.execRoot, 'logging'),
    });
  },
  stop: (containers, { config }) => containers.shutdown(config()['live-restore'], config()['shutdown-timeout']),
};

export const archivesService: DaemonService<'archives'> = {
  id: 'archives',
  requires: ['containers', 'supervisor'],
  init: ({ containers, supervisor, options, log }) => {
    const userns = options.userns;
    return new ArchiveService({
      containers,
      client: supervisor.client,
      tmpDir: options.roots.tmpDir,
      log: log.child({ module: 'archive' }),
      ...(userns ? { remapOf: (rec: ContainerRecord) => (usesRemap(rec.HostConfig.UsernsMode, true) ? userns : undefined) } : {}),
    });
  },
};

export const execsService: DaemonService<'execs'> = {
  id: 'execs',
  requires: ['supervisor', 'containers', 'execRegistry', 'runs'],
  init: ({ supervisor, containers, options, log, execRegistry, runs }) =>
    new ExecService({
      client: supervisor.client,
      containers,
      execRoot: options.roots.execRoot,
      log: log.child({ module: 'exec' }),
      registry: execRegistry,
      runs,
      onEvent: (e) => containers.publishEvent(e.containerId, e.action, e.attributes),
    }),
  stop: (execs) => execs.close(),
};

export const healthService: DaemonService<'health'> = {
  id: 'health',
  requires: ['containers', 'execs', 'runs', 'metrics'],
  init: ({ containers, execs, runs, metrics, log }) =>
    new HealthMonitor({
      host: {
        find: (id) => containers.find(id),
        save: (id) => containers.saveState(id),
        probe: (id, cmd, t, max) => (metrics ? metrics.healthCheck(execs.probe(id, cmd, t, max)) : execs.probe(id, cmd, t, max)),
      },
      log: log.child({ module: 'health' }),
      onStatus: (id, status) => containers.publishEvent(id, `health_status: ${status}`),
      runs,
    }),
  stop: (health) => health.stopAll(),
};

/**
 * Sandboxes of containers recorded as not running (or unknown) go before anything can start; those
 * of containers recorded as running are the containers' restore's to keep or tear down. Reconciling
 * the containers with containerd then goes on in the background: the API answers at once, and a
 * request on a container still being reconciled waits for that container only. A node saved in a
 * cluster comes back into it in the background too (/info shows it pending until then).
 */
export const restoreService: DaemonService<'restore'> = {
  id: 'restore',
  requires: ['networking', 'containers', 'cluster'],
  init: async ({ networking, containers, cluster, config, log }) => {
    await networking.lifecycle.reconcile((id) => {
      try {
        return containers.find(id).State.Running;
      } catch {
        return undefined; // not in the store
      }
    });
    void containers.restore(config()['live-restore']);
    cluster.restore().catch((err: Error) => log.warn(`cluster state not restored: ${err.message}`));
  },
};
