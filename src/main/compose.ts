// The composition root: one function that builds every service, hands them to the API routers as
// their backends, and opens the listeners — the single place to see how the daemon fits together,
// and the only module that may import from every layer (see ARCHITECTURE.md).
import { randomUUID } from 'node:crypto';
import { parseGenericResources } from '../config/generic-resources.ts';
import { arch, release } from 'node:os';
import { join } from 'node:path';
import { ApiServer } from '../api/server.ts';
import { defaultHosts, parseHostSpec } from '../api/host-spec.ts';
import { openListeners, type OpenListener } from '../api/listeners.ts';
import { registerSystemRoutes } from '../api/routes/system.ts';
import type { LoadedConfig } from '../config/daemon-config.ts';
import { openDatabase } from '../store/database.ts';
import { RecordTable } from '../store/kv.ts';
import { EventLog } from '../store/events.ts';
import { EventBus } from '../events/bus.ts';
import { registerEventRoutes } from '../api/routes/events.ts';
import { publishDaemonEvent, reloadAttributes } from '../events/daemon-events.ts';
import { registerSystemDfRoutes } from '../api/routes/system-df.ts';
import { DiskUsageService } from '../daemon/disk-usage.ts';
import { Supervisor } from '../supervisor/supervisor.ts';
import type { ManagedStart } from '../supervisor/containerd-process.ts';
import type { Logger } from '../util/log.ts';
import { ENGINE_COMMIT, ENGINE_VERSION } from '../version.ts';
import { startMetricsServer } from '../api/metrics-server.ts';
import { SystemService, type ComponentVersions } from '../daemon/system.ts';
import { initVersion } from '../daemon/init-binary.ts';
import { resolveCgroupDriver } from '../oci/cgroups.ts';
import { applyCpuRealtime } from '../daemon/cpu-rt.ts';
import { cgroupVersion, cgroupsDelegated, defaultCgroupParent, detectCgroupLayout } from '../oci/cgroups.ts';
import { ContainerStore } from '../store/containers.ts';
import { ImageStore } from '../images/image-store.ts';
import { ImageService } from '../images/image-service.ts';
import { registerImageRoutes } from '../api/routes/images.ts';
import { DistributionService } from '../images/distribution/service.ts';
import { registerDistributionRoutes } from '../api/routes/distribution.ts';
import { RuntimeRegistry } from '../daemon/runtimes.ts';
import { RootfsManager } from '../daemon/containers/rootfs.ts';
import { TaskLauncher } from '../daemon/containers/task-launcher.ts';
import { ContainerService } from '../daemon/containers/service.ts';
import { ContainerRunEvents } from '../daemon/containers/run-events.ts';
import { volumeUsers } from '../daemon/containers/volume-users.ts';
import type { ContainerRecord } from '../daemon/containers/record.ts';
import { registerContainerRoutes } from '../api/routes/containers.ts';
import { registerNetworkRoutes } from '../api/routes/networks.ts';
import { composeNetworking } from './compose-network.ts';
import { EngineError, notFound } from '../errors.ts';
import { registerAttachRoutes } from '../api/routes/attach.ts';
import { registerAttachWsRoutes } from '../api/routes/attach-ws.ts';
import { registerVolumeRoutes } from '../api/routes/volumes.ts';
import { registerArchiveRoutes } from '../api/routes/archive.ts';
import { VolumeService, type VolumeRecord } from '../daemon/volumes/service.ts';
import { ArchiveService } from '../daemon/archive/service.ts';
import { registerExecRoutes } from '../api/routes/exec.ts';
import { registerStatsRoutes } from '../api/routes/stats.ts';
import { registerClusterRoutes } from '../api/routes/cluster.ts';
import { registerPluginRoutes } from '../api/routes/plugins.ts';
import { PluginFiles } from '../daemon/plugins/store.ts';
import { decodeAuthHeaderLenient } from '../images/distribution/auth-config.ts';
import { AuthzChain } from '../plugins/authz.ts';
import { CdiRegistry } from '../oci/cdi.ts';
import { PluginRegistry } from '../plugins/registry.ts';
import { VolumePlugins } from '../plugins/volume-driver.ts';
import { StatsService, factsOf } from '../daemon/stats/service.ts';
import { ExecService } from '../daemon/exec/service.ts';
import { ExecRegistry } from '../daemon/exec/registry.ts';
import { DEFAULT_DETACH_KEYS, EscapeMatcher, parseDetachKeys } from '../daemon/exec/detach-keys.ts';
import { HealthMonitor } from '../daemon/health/monitor.ts';
import { parseSize } from '../config/values.ts';
import { snapshotterFor } from '../daemon/storage-driver.ts';
import { chown, mkdir } from 'node:fs/promises';
import { usesRemap, type IdentityMap } from '../oci/userns.ts';
import { startHeapTrimmer } from '../util/heap-trim.ts';
import { registerBuildRoutes } from '../api/routes/build.ts';
import { lazyBuildService } from './build-lazy.ts';
import { lazyPluginManager } from './plugins-lazy.ts';
import { lazyClusterService } from './cluster-lazy.ts';
import { clusterRuntime } from './cluster-runtime.ts';
import { startupMark } from '../util/startup-trace.ts';
import type { TaskRuntime } from '../cluster/task-runtime.ts';
import { API_VERSION } from '../util/api-version.ts';

/** Container and network actions timed for metrics, by backend method (dockerd's action names). */
const CONTAINER_ACTIONS = {
  create: 'create',
  start: 'start',
  stop: 'stop',
  restart: 'restart',
  kill: 'kill',
  remove: 'delete',
  pause: 'pause',
  unpause: 'unpause',
  rename: 'rename',
  update: 'update',
  wait: 'wait',
  inspect: 'inspect',
  list: 'list',
} as const;
const NETWORK_ACTIONS = { create: 'create', remove: 'delete', connect: 'connect', disconnect: 'disconnect' } as const;
export interface DaemonOptions {
  loaded: () => LoadedConfig;
  log: Logger;
  roots: { dataRoot: string; execRoot: string; tmpDir: string };
  startedAt: Date;
  /** Our containerd, already starting (engined.ts spawns it before loading this module). */
  containerd?: ManagedStart;
  /** --userns-remap in force (resolved by engined.ts; roots.dataRoot is then the `<uid>.<gid>` tree). */
  userns?: IdentityMap;
}

export interface RunningDaemon {
  addresses: string[];
  reloaded(changed: string[]): void;
  shutdown(): Promise<void>;
}

/** Grace period for in-flight requests at shutdown before connections are cut. */
const REQUEST_DRAIN_MS = 5_000;

export async function startDaemon(opts: DaemonOptions): Promise<RunningDaemon> {
  const { log, roots } = opts;
  const cfg = () => opts.loaded().config;
  const initial = cfg();
  const cleanups: Array<() => Promise<void> | void> = [];
  const shutdown = async () => {
    for (const fn of cleanups.splice(0).reverse()) {
      try {
        await fn();
      } catch (err) {
        log.error(`shutdown step failed: ${(err as Error).message}`);
      }
    }
  };

  try {
    const cgroupDriver = resolveCgroupDriver(initial['exec-opts']);
    applyCpuRealtime({
      period: initial['cpu-rt-period'],
      runtime: initial['cpu-rt-runtime'],
      cgroupParent: initial['cgroup-parent'] || `/${defaultCgroupParent(cgroupDriver).replace(/^\//, '')}`,
      layout: detectCgroupLayout(),
    });
    const db = openDatabase(join(roots.dataRoot, 'engine.db'), {
      checkpointInBackground: { warn: (message) => log.warn(message) },
    });
    cleanups.push(() => db.close());
    startupMark('db-open');
    // Every service publishes here (persisted before delivery; see events/bus.ts).
    const events = new EventBus({ log: new EventLog(db), logger: log.child({ module: 'events' }) });
    const meta = new RecordTable<{ value: string }>(db, 'meta');
    let engineId = meta.get('engine-id')?.value;
    if (!engineId) {
      engineId = randomUUID();
      meta.put('engine-id', { value: engineId });
    }

    // Bridges, firewall chains and surviving sandboxes come back before any container starts —
    // while containerd boots: the two are independent, and both mostly wait on other processes.
    // At shutdown (after the containers stopped) proxies and DNS stop, and without live-restore
    // the daemon's bridges and chains go too.
    // Networking finds containers by reference (DNS answers, links, connect); the containers service
    // is built later (it needs the sandboxes), and until then no container is known.
    let containerService: ContainerService | undefined;
    // Cluster mode: built early (it needs nothing else) so networking can ask whether this node
    // manages a cluster; a node saved in a cluster comes back into it in the background once the
    // routes exist (its etcd or its heartbeat to the managers); /info shows it pending until then.
    // Its modules load only for a node saved in a cluster or on a cluster request (cluster-lazy.ts).
    // Task containers run on the containers service once it is built (the agent waits until then).
    let taskRuntime: TaskRuntime | undefined;
    const cluster = lazyClusterService({
      dataRoot: roots.dataRoot,
      execRoot: roots.execRoot,
      log,
      engineVersion: ENGINE_VERSION,
      engineLabels: () => cfg().labels,
      // Built just below; called only once the cluster runs.
      overlay: () => networking.overlay,
      genericResources: () => parseGenericResources(cfg()['node-generic-resources']),
      defaultAdvertiseAddr: () => cfg()['cluster-default-advertise-addr'] || undefined,
      controlPlaneMtu: () => cfg()['network-control-plane-mtu'],
      events,
      runtime: () =>
        (taskRuntime ??= containerService
          ? clusterRuntime(containerService, runs, roots.execRoot, () => networking.overlay, { store: images, distribution })
          : undefined),
    });
    cleanups.push(() => cluster.shutdown());
    const networking = composeNetworking({
      db,
      config: cfg,
      log: log.child({ module: 'network' }),
      execRoot: roots.execRoot,
      events,
      daemonId: engineId,
      clusterManager: () => cluster.pingState() === 'active/manager',
      overlayControl: () => cluster.overlayControl(),
      containers: {
        find: (ref) => {
          if (!containerService) throw notFound(`No such container: ${ref}`);
          return containerService.find(ref);
        },
      },
    });
    const networks = networking.lifecycle;
    startupMark('networking-built');
    const starting = Supervisor.start({
      ...(initial.supervisor ? { address: initial.supervisor } : {}),
      dataRoot: roots.dataRoot,
      execRoot: roots.execRoot,
      namespace: initial['supervisor-namespace'],
      pluginsNamespace: initial['supervisor-plugins-namespace'],
      cri: initial['cri-supervisor'],
      log,
      ...(opts.containerd ? { prestarted: opts.containerd } : {}),
    });
    const networkInit = networks.init();
    void networkInit.then(
      () => startupMark('network-init'),
      () => undefined,
    );
    void starting.then(
      () => startupMark('supervisor-connected'),
      () => undefined,
    );
    const [started] = await Promise.allSettled([starting, networkInit]);
    if (started.status === 'rejected') {
      // Start-up already failed; networking set-up that never finished has nothing to shut down.
      if (
        await networkInit.then(
          () => true,
          () => false,
        )
      )
        // Start-up already failed (that error is thrown below); a failed network teardown adds nothing to it.
        await networks.shutdown(false).catch(() => undefined);
      throw started.reason;
    }
    const supervisor = started.value;
    startupMark('supervisor-and-network-init');
    cleanups.push(async () => {
      // live-restore: containerd outlives the daemon so running containers keep their shims,
      // Wait calls and events; the next daemon adopts it.
      if (cfg()['live-restore'] && supervisor.managed) {
        await supervisor.reapOrphanShims();
        supervisor.client.close();
        supervisor.managed.release();
      } else {
        await supervisor.stop();
      }
    });

    cleanups.push(() => networks.shutdown(cfg()['live-restore']));
    const client = supervisor.client; // its default snapshotter is overlayfs (overlay2)
    const images = new ImageStore(client);
    // Warms the image cache (and /info's image count) while the rest is built: awaited before the
    // listeners open; the first API call lists again and reports any failure.
    const imagesWarm = images.list().catch(() => []);
    await networkInit;
    const snapshotter = await snapshotterFor(supervisor.client, initial['storage-driver'], initial['storage-opts'], roots.dataRoot);
    startupMark('snapshotter');
    const containersDir = join(roots.dataRoot, 'containers');
    await mkdir(containersDir, { recursive: true, mode: 0o710 });
    // Remapped containers reach their /etc/hosts & co. through the group (dockerd's 0710 root:<gid>).
    if (opts.userns) await chown(containersDir, process.getuid!(), opts.userns.rootGid);
    const distribution = new DistributionService({
      client,
      images,
      snapshotter,
      config: cfg,
      log: log.child({ module: 'distribution' }),
      events,
      // Our own containerd: downloads land directly in its content directory (see blob-writer.ts).
      ...(supervisor.managed ? { contentRoot: join(roots.dataRoot, 'containerd', 'io.containerd.content.v1.content') } : {}),
      // Layers unpacked while they download, on worker threads (stage-pool.ts, staged-unpack.ts);
      // ENGINE_PULL_UNPACK=service: containerd's diff service after each download instead.
      ...(process.env.ENGINE_PULL_UNPACK === 'service' ? { stageLayers: false } : {}),
      // The workers send the layers' GETs themselves (worker-fetch.ts); ENGINE_PULL_FETCH=main: the
      // main thread receives and hands the bytes over (the path before).
      ...(process.env.ENGINE_PULL_FETCH === 'main' ? { workerFetch: false } : {}),
    });
    void distribution.dropStaleLeases();
    cleanups.push(() => distribution.close());
    startupMark('distribution-built');
    const runtimes = new RuntimeRegistry(roots.execRoot, initial.runtimes);
    const rootfs = new RootfsManager(client, snapshotter, roots.tmpDir, opts.userns);
    const shmSize = parseSize(initial['default-shm-size']);
    // Rootless: cgroups only where delegated to the user (cgroup v2); otherwise limits are refused.
    const noCgroups = initial.rootless && !cgroupsDelegated();
    const rootlessWarnings = noCgroups
      ? [
          'Running in rootless mode without cgroups: resource limits are refused. To enable cgroups in rootless mode, boot the host with cgroup v2 and delegate controllers to the user.',
        ]
      : [];
    for (const w of rootlessWarnings) log.warn(w);
    // Volumes: records in the store, data under <data-root>/volumes; who uses them is read from the
    // container records (the volume service comes first: containers need it at create and start).
    const containerStore = new ContainerStore<ContainerRecord>(db);
    startupMark('container-store');
    const volumeTable = new RecordTable<VolumeRecord>(db, 'volumes');
    // Managed plugins (/plugins*): containers in the plugins namespace, records and rootfs under
    // <data-root>/plugins, sockets under <exec-root>/plugins/<id>/. They start before anything that
    // may use them (volumes, authorization) and stop after the containers.
    // The manager's modules load only when plugins are recorded or first asked for (plugins-lazy.ts).
    const pluginFiles = new PluginFiles(join(roots.dataRoot, 'plugins'));
    const plugins = lazyPluginManager(pluginFiles, async () => {
      const [{ PluginManager }, { PluginRunner }] = await Promise.all([
        import('../daemon/plugins/service.ts'),
        import('../daemon/plugins/runner.ts'),
      ]);
      return new PluginManager({
        files: pluginFiles,
        runner: new PluginRunner({
          client: supervisor.pluginsClient,
          files: pluginFiles,
          socketsRoot: join(roots.execRoot, 'plugins'),
          runcRoot: supervisor.runcRoot,
          cgroupDriver,
          log: log.child({ module: 'plugins' }),
        }),
        registry: distribution,
        decodeAuth: decodeAuthHeaderLenient,
        log: log.child({ module: 'plugins' }),
        events,
        // dockerd counts a plugin's volumes and the running containers logging through it as
        // references: it cannot be disabled or removed while they exist.
        inUse: (name) => {
          const named = (driver: string | undefined) => !!driver && (driver === name || `${driver}:latest` === name);
          return (
            volumeTable.list().some((v) => named(v.Driver)) ||
            containerStore.list().some((r) => r.State.Running && named(r.HostConfig.LogConfig?.Type))
          );
        },
      });
    });
    await plugins.init();
    startupMark('plugins-init');
    cleanups.push(() => plugins.shutdown(cfg()['live-restore']));
    const volumes = new VolumeService({
      table: volumeTable,
      root: join(roots.dataRoot, 'volumes'),
      tmpDir: roots.tmpDir,
      log: log.child({ module: 'volumes' }),
      events,
      users: () => volumeUsers(containerStore.list()),
      // Volume plugins get dockerd's patience with a plugin that is still starting.
      plugins: new VolumePlugins(new PluginRegistry({ activationBudgetMs: 10_000, managed: plugins })),
      ...(opts.userns ? { rootOwner: { uid: opts.userns.rootUid, gid: opts.userns.rootGid } } : {}),
    });
    await volumes.init();
    startupMark('volumes-init');
    // CDI specs are read again whenever the spec directories change; features.cdi=false turns CDI off.
    const cdiDirs = () => (cfg().features?.cdi === false ? [] : cfg()['cdi-spec-dirs']);
    const cdi = new CdiRegistry(cdiDirs);
    const launcher = new TaskLauncher({
      client,
      rootfs,
      runtimes,
      config: cfg,
      log: log.child({ module: 'containers' }),
      execRoot: roots.execRoot,
      runcRoot: supervisor.runcRoot,
      containersDir,
      tmpDir: roots.tmpDir,
      cgroupDriver,
      shmSize,
      networks: networking.run,
      volumes,
      ...(opts.userns ? { userns: opts.userns } : {}),
      ...(noCgroups ? { noCgroups } : {}),
    });
    // Container runs are announced on `runs` (health checks and exec clean-up subscribe); inspect's
    // ExecIDs come from the exec registry. Both exist before the services on either side of them.
    const logPluginRegistry = new PluginRegistry({ activationBudgetMs: 10_000, managed: plugins });
    const runs = new ContainerRunEvents(log.child({ module: 'containers' }));
    const execRegistry = new ExecRegistry();
    const containers = new ContainerService({
      client,
      images,
      store: containerStore,
      rootfs,
      runtimes,
      launcher,
      config: cfg,
      log: log.child({ module: 'containers' }),
      containersDir,
      shmSize,
      events,
      networks: networking.containers,
      volumes,
      cdi,
      runs,
      execs: execRegistry,
      // Log-driver plugins: discovered or managed, implementing LogDriver (dockerd's patience with a starting plugin).
      logPlugins: (name) => logPluginRegistry.get(name, 'LogDriver'),
      logFifoDir: join(roots.execRoot, 'logging'),
    });
    const archives = new ArchiveService({
      containers,
      client,
      tmpDir: roots.tmpDir,
      log: log.child({ module: 'archive' }),
      ...(opts.userns ? { remapOf: (rec: ContainerRecord) => (usesRemap(rec.HostConfig.UsernsMode, true) ? opts.userns : undefined) } : {}),
    });
    containerService = containers;
    const execs = new ExecService({
      client,
      containers,
      execRoot: roots.execRoot,
      log: log.child({ module: 'exec' }),
      registry: execRegistry,
      runs,
      onEvent: (e) => containers.publishEvent(e.containerId, e.action, e.attributes),
    });
    cleanups.push(() => execs.close());
    // Metrics (--metrics-addr, experimental): loaded only when asked for. Counters read the stats
    // sampler at scrape time; action timings wrap the backends the routes call.
    const metricsAddr = cfg()['metrics-addr'];
    if (metricsAddr && !cfg().experimental) throw new Error('metrics-addr is only supported when experimental is enabled');
    const metrics = metricsAddr
      ? new (await import('../daemon/metrics/engine-metrics.ts')).EngineMetrics({
          info: {
            version: ENGINE_VERSION,
            commit: ENGINE_COMMIT,
            daemon_id: engineId,
            kernel: release(),
            os_type: 'linux',
            architecture: arch() === 'x64' ? 'x86_64' : arch(),
            graphdriver: 'overlay2',
          },
          containers: () =>
            containerStore.list().map((r) => ({
              id: r.Id,
              name: r.Name.replace(/^\//, ''),
              state: r.State.Paused ? 'paused' : r.State.Running ? 'running' : 'stopped',
            })),
          sample: (id) => stats.sample(id),
          subscribeEvents: (fn) => events.subscribe(fn),
        })
      : undefined;
    if (metrics) cleanups.push(() => metrics.close());
    const health = new HealthMonitor({
      host: {
        find: (id) => containers.find(id),
        save: (id) => containers.saveState(id),
        probe: (id, cmd, t, max) => (metrics ? metrics.healthCheck(execs.probe(id, cmd, t, max)) : execs.probe(id, cmd, t, max)),
      },
      log: log.child({ module: 'health' }),
      onStatus: (id, status) => containers.publishEvent(id, `health_status: ${status}`),
      runs,
    });
    cleanups.push(() => health.stopAll());
    const imageService = new ImageService({
      client,
      images,
      snapshotter,
      containers,
      rootfs,
      tmpDir: roots.tmpDir,
      log: log.child({ module: 'images' }),
      // The commit fast path writes beside containerd's blobs (images/commit-fast.ts);
      // ENGINE_COMMIT_DIFF=service keeps commits on containerd's diff service (the bench compares).
      ...(supervisor.managed && process.env.ENGINE_COMMIT_DIFF !== 'service'
        ? { contentRoot: join(roots.dataRoot, 'containerd', 'io.containerd.content.v1.content') }
        : {}),
      driver: initial['storage-driver'] || 'overlay2',
      events,
      containerEvent: (id, action, attributes) => containers.publishEvent(id, action, attributes),
    });
    imageService.start();
    cleanups.push(() => imageService.stop());
    // The classic builder: RUN steps are containers of the container service; its cache is in
    // engine.db. Its modules load on its first use (build-lazy.ts).
    const builder = lazyBuildService({
      db,
      client,
      images,
      imageService,
      distribution,
      containers,
      snapshotter,
      tmpDir: roots.tmpDir,
      // As commit's: layers of COPY/ADD/WORKDIR read from the snapshot's upper directory.
      ...(supervisor.managed && process.env.ENGINE_COMMIT_DIFF !== 'service'
        ? { contentRoot: join(roots.dataRoot, 'containerd', 'io.containerd.content.v1.content') }
        : {}),
      log: log.child({ module: 'build' }),
      builderConfig: () => cfg().builder,
      ...(metrics ? { metrics: metrics.builds } : {}),
    });
    // Sandboxes of containers recorded as not running (or unknown) go before anything can start;
    // those of containers recorded as running are the containers' restore's to keep or tear down.
    await networks.reconcile((id) => {
      try {
        return containers.find(id).State.Running;
      } catch {
        return undefined; // not in the store
      }
    });
    // Reconciling the containers with containerd goes on in the background: the API answers at
    // once, and a request on a container still being reconciled waits for that container only.
    void containers.restore(initial['live-restore']);
    startupMark('restore-started');
    // Shutdown order (cleanups run in reverse): stop accepting → stop containers (which ends log
    // followers and attach streams) → wait for in-flight requests, cutting them after a grace period.
    let listenersClosing: Promise<unknown> = Promise.resolve();
    let cutConnections = () => {};
    cleanups.push(async () => {
      const timer = setTimeout(cutConnections, REQUEST_DRAIN_MS);
      await listenersClosing;
      clearTimeout(timer);
    });
    // After the containers stopped (their kill/die events reach the streams), /events streams end.
    cleanups.push(() => events.close());
    cleanups.push(() => containers.shutdown(cfg()['live-restore'], cfg()['shutdown-timeout']));

    const listenWarnings: string[] = [];
    let componentsCache: ComponentVersions | undefined;
    void cluster.restore();
    const minApiVersion = opts.loaded().minApiVersion;
    const system = new SystemService({
      cluster,
      ...(minApiVersion ? { minApiVersion } : {}),
      eventListeners: () => events.subscribers,
      config: cfg,
      engineId,
      warnings: () => [...opts.loaded().warnings, ...rootlessWarnings, ...listenWarnings, ...cdi.specErrors()],
      cdiSpecDirs: cdiDirs,
      components: async () => {
        if (componentsCache) return componentsCache;
        const v = await supervisor.versions();
        componentsCache = {
          containerd: v.containerd,
          runc: { version: v.runc.version, commit: v.runc.commit },
          init: initVersion(cfg()['init-path']),
        };
        return componentsCache;
      },
      counters: { containers: () => containers.counts(), images: () => images.count() },
      supervisorAddress: supervisor.address,
      runtimes: () => runtimes.specs(),
      cgroupDriver,
      startedAt: opts.startedAt,
      security: { userns: opts.userns !== undefined, rootless: initial.rootless },
      managedPlugins: (iface) => plugins.enabledWith(iface),
      ...(opts.userns ? { dataRoot: roots.dataRoot } : {}),
    });

    // One shared sampler for every stats request; closing it ends open streams before the request drain.
    const stats = new StatsService({
      containers: {
        find: (ref) => factsOf(containers.find(ref)),
        byId: (id) => {
          try {
            const rec = containers.find(id);
            return rec.Id === id ? factsOf(rec) : undefined;
          } catch {
            return undefined;
          }
        },
      },
    });
    cleanups.push(() => stats.close());
    // Authorization plugins: the list is read at each request, so a reload takes effect at once.
    // A plugin that went away denies at once rather than after dockerd's 30 s of retries.
    const authorizer = new AuthzChain(
      new PluginRegistry({ activationBudgetMs: 2000, managed: plugins }),
      () => cfg()['authorization-plugins'],
      log.child({ module: 'authz' }),
    );
    const api = new ApiServer(log, {
      serverVersion: ENGINE_VERSION,
      experimental: () => cfg().experimental,
      authorizer,
      ...(minApiVersion ? { minApiVersion } : {}),
    });
    /** A local image's platform for the routes' platform checks; undefined when there is no such image. */
    const imagePlatform = (ref: string) =>
      imageService.inspect(ref, API_VERSION).then(
        (v) => v as Record<string, unknown>,
        (err: unknown) => {
          if (err instanceof EngineError && err.code === 'NOT_FOUND') return undefined;
          throw err;
        },
      );
    registerSystemRoutes(api.router, system);
    registerEventRoutes(api.router, events);
    registerSystemDfRoutes(
      api.router,
      new DiskUsageService({ images: imageService, containers, volumes: () => volumes.list({ usage: true }), buildCache: builder }),
    );
    registerContainerRoutes(api.router, metrics ? metrics.timed(containers, 'container', CONTAINER_ACTIONS) : containers, {
      cgroup2: cgroupVersion() === 2,
      // create's platform (API 1.41+) is checked against the local image; none: the create's own 404.
      imagePlatform,
    });
    registerNetworkRoutes(api.router, metrics ? metrics.timed(networking.api, 'network', NETWORK_ACTIONS) : networking.api);
    registerAttachRoutes(api.router, containers);
    registerAttachWsRoutes(api.router, containers);
    registerVolumeRoutes(api.router, volumes);
    registerArchiveRoutes(api.router, archives);
    registerDistributionRoutes(api.router, distribution, { imagePlatform });
    registerImageRoutes(api.router, imageService);
    registerBuildRoutes(api.router, builder, { experimental: () => cfg().experimental });
    registerExecRoutes(api.router, execs, {
      detachWatcher: (keys) => new EscapeMatcher(keys.length ? keys : parseDetachKeys(DEFAULT_DETACH_KEYS)),
    });
    registerStatsRoutes(api.router, stats);
    registerClusterRoutes(api.router, cluster);
    registerPluginRoutes(api.router, plugins);
    startupMark('routes');

    const hosts = initial.hosts.filter((h) => h !== '');
    const tlsOn = initial.tls || initial.tlsverify;
    const specs = (hosts.length ? hosts : defaultHosts()).map((h) => parseHostSpec(h, tlsOn));
    for (const s of specs) {
      if (s.kind === 'tcp' && !tlsOn) {
        listenWarnings.push(
          `WARNING: API is accessible on http://${s.host}:${s.port} without encryption.\n         Access to the remote API is equivalent to root access on the host. Refer\n         to the 'Docker daemon attack surface' section in the documentation for\n         more information: https://docs.docker.com/go/attack-surface/`,
        );
      }
    }
    await imagesWarm;
    startupMark('images-listed');
    const listeners: OpenListener[] = await openListeners(specs, {
      ...(tlsOn ? { tls: { cert: initial.tlscert, key: initial.tlskey, ca: initial.tlscacert, verify: initial.tlsverify } } : {}),
      group: initial.group,
      log,
      onRequest: (req, res, prefix) => api.handleRequest(req, res, prefix),
      onUpgrade: (req, socket, head, prefix) => api.handleUpgrade(req, socket, head, prefix),
      onConnect: (req, socket, head, prefix) => api.handleConnect(req, socket, head, prefix),
    });
    startupMark('listening');
    cutConnections = () => listeners.forEach((l) => l.closeAllConnections());
    cleanups.push(() => {
      listenersClosing = Promise.all(listeners.map((l) => l.close()));
    });
    if (metrics && metricsAddr) {
      const metricsServer = await startMetricsServer(metricsAddr, metrics, log);
      cleanups.push(() => void metricsServer.close());
    }
    // Memory goes back to the OS once a burst of work is over (see util/heap-trim.ts).
    const heapTrimmer = startHeapTrimmer({ log: log.child({ module: 'memory' }) });
    cleanups.push(() => heapTrimmer.stop());

    return {
      addresses: listeners.map((l) => l.address),
      reloaded(changed: string[]) {
        const c = cfg();
        if (changed.includes('debug') || changed.includes('log-level')) log.configure({ level: c['log-level'] });
        if (changed.includes('runtimes')) runtimes.reload(c.runtimes);
        publishDaemonEvent(events, engineId!, 'reload', reloadAttributes(c));
      },
      shutdown,
    };
  } catch (err) {
    await shutdown();
    throw err;
  }
}
