// The API side: metrics (--metrics-addr, experimental, loaded only when asked for), /info and
// /version, the shared stats sampler, the API server with every router on its backend, the
// listeners, and the memory trimmer that runs once the daemon serves.
import { arch, release } from 'node:os';
import { join } from 'node:path';
import { defaultHosts, parseHostSpec } from '../../api/host-spec.ts';
import { startConsoleServer } from '../../api/console-server.ts';
import { loadTls, openListeners } from '../../api/listeners.ts';
import { startMetricsServer } from '../../api/metrics-server.ts';
import { registerArchiveRoutes } from '../../api/routes/archive.ts';
import { registerAttachWsRoutes } from '../../api/routes/attach-ws.ts';
import { registerAttachRoutes } from '../../api/routes/attach.ts';
import { registerBuildRoutes } from '../../api/routes/build.ts';
import { registerClusterRoutes } from '../../api/routes/cluster.ts';
import { registerContainerRoutes } from '../../api/routes/containers.ts';
import { registerDistributionRoutes } from '../../api/routes/distribution.ts';
import { registerEventRoutes } from '../../api/routes/events.ts';
import { registerExecRoutes } from '../../api/routes/exec.ts';
import { registerImageRoutes } from '../../api/routes/images.ts';
import { registerNetworkRoutes } from '../../api/routes/networks.ts';
import { registerPluginRoutes } from '../../api/routes/plugins.ts';
import { registerStatsRoutes } from '../../api/routes/stats.ts';
import { registerSystemDfRoutes } from '../../api/routes/system-df.ts';
import { registerSystemRoutes } from '../../api/routes/system.ts';
import { registerVolumeRoutes } from '../../api/routes/volumes.ts';
import { ApiServer } from '../../api/server.ts';
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { DiskUsageService } from '../../daemon/disk-usage.ts';
import { DEFAULT_DETACH_KEYS, EscapeMatcher, parseDetachKeys } from '../../daemon/exec/detach-keys.ts';
import { initVersion } from '../../daemon/init-binary.ts';
import { CONTAINER_ACTIONS, NETWORK_ACTIONS } from '../../daemon/metrics/actions.ts';
import { StatsService, factsOf } from '../../daemon/stats/service.ts';
import { SystemService, type ComponentVersions } from '../../daemon/system.ts';
import { AuthzChain } from '../../plugins/authz.ts';
import { PluginRegistry } from '../../plugins/registry.ts';
import { findUpwards } from '../../util/find-upwards.ts';
import { startHeapTrimmer } from '../../util/heap-trim.ts';
import { ENGINE_COMMIT, ENGINE_VERSION } from '../../version.ts';
import { EngineError } from '../../errors.ts';
import { cgroupVersion } from '../../oci/cgroups.ts';
import { API_VERSION } from '../../util/api-version.ts';
import { cdiSpecDirs } from './containers.ts';
import type { DaemonService } from './types.ts';

/** The listen addresses in force, and the warning dockerd gives for each plain-TCP one. */
function listenSpecs(c: DaemonConfig) {
  const hosts = c.hosts.filter((h) => h !== '');
  const tlsOn = c.tls || c.tlsverify;
  const specs = (hosts.length ? hosts : defaultHosts()).map((h) => parseHostSpec(h, tlsOn));
  const warnings = specs.flatMap((s) =>
    s.kind === 'tcp' && !tlsOn
      ? [
          `WARNING: API is accessible on http://${s.host}:${s.port} without encryption.\n         Access to the remote API is equivalent to root access on the host. Refer\n         to the 'Docker daemon attack surface' section in the documentation for\n         more information: https://docs.docker.com/go/attack-surface/`,
        ]
      : [],
  );
  return { specs, tlsOn, warnings };
}

export const metricsService: DaemonService<'metrics'> = {
  id: 'metrics',
  requires: ['containerStore', 'events', 'engineId'],
  uses: ['stats'],
  init: async ({ config, containerStore, events, engineId }, later) => {
    if (!config()['metrics-addr']) return undefined;
    if (!config().experimental) throw new Error('metrics-addr is only supported when experimental is enabled');
    const stats = later('stats');
    // Counters read the stats sampler at scrape time; action timings wrap the backends the routes call.
    const { EngineMetrics } = await import('../../daemon/metrics/engine-metrics.ts');
    return new EngineMetrics({
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
      sample: (id) => stats().sample(id),
      subscribeEvents: (fn) => events.subscribe(fn),
    });
  },
  stop: (metrics) => metrics?.close(),
};

export const systemService: DaemonService<'system'> = {
  id: 'system',
  requires: ['cluster', 'events', 'engineId', 'supervisor', 'containers', 'images', 'runtimes', 'cgroupDriver', 'plugins', 'limits', 'cdi'],
  init: ({ options, config, cluster, events, engineId, supervisor, containers, images, runtimes, cgroupDriver, plugins, limits, cdi }) => {
    let components: ComponentVersions | undefined;
    const initial = config();
    const minApiVersion = options.loaded().minApiVersion;
    return new SystemService({
      cluster,
      ...(minApiVersion ? { minApiVersion } : {}),
      eventListeners: () => events.subscribers,
      config,
      engineId,
      warnings: () => [...options.loaded().warnings, ...limits.warnings, ...listenSpecs(initial).warnings, ...cdi.specErrors()],
      cdiSpecDirs: cdiSpecDirs(config),
      components: async () => {
        if (components) return components;
        const v = await supervisor.versions();
        components = {
          containerd: v.containerd,
          runc: { version: v.runc.version, commit: v.runc.commit },
          init: initVersion(config()['init-path']),
        };
        return components;
      },
      counters: { containers: () => containers.counts(), images: () => images.count() },
      supervisorAddress: supervisor.address,
      runtimes: () => runtimes.specs(),
      cgroupDriver,
      startedAt: options.startedAt,
      security: { userns: options.userns !== undefined, rootless: initial.rootless },
      managedPlugins: (iface) => plugins.enabledWith(iface),
      ...(options.userns ? { dataRoot: options.roots.dataRoot } : {}),
    });
  },
};

/** One shared sampler for every stats request; closing it ends open streams before the request drain. */
export const statsService: DaemonService<'stats'> = {
  id: 'stats',
  requires: ['containers'],
  init: ({ containers }) =>
    new StatsService({
      containers: {
        find: (ref) => factsOf(containers.find(ref)),
        byId: (id) => {
          try {
            const rec = containers.find(id);
            return rec.Id === id ? factsOf(rec) : undefined;
          } catch {
            return undefined; // no such container: no stats
          }
        },
      },
    }),
  stop: (stats) => stats.close(),
};

export const apiService: DaemonService<'api'> = {
  id: 'api',
  requires: [
    'system',
    'events',
    'imageService',
    'containers',
    'volumes',
    'networking',
    'archives',
    'distribution',
    'builder',
    'execs',
    'stats',
    'cluster',
    'plugins',
    'metrics',
  ],
  init: (d) => {
    const { config, log, metrics, containers } = d;
    // Authorization plugins: the list is read at each request, so a reload takes effect at once.
    // A plugin that went away denies at once rather than after dockerd's 30 s of retries.
    const authorizer = new AuthzChain(
      new PluginRegistry({ activationBudgetMs: 2000, managed: d.plugins }),
      () => config()['authorization-plugins'],
      log.child({ module: 'authz' }),
    );
    const minApiVersion = d.options.loaded().minApiVersion;
    const api = new ApiServer(log, {
      serverVersion: ENGINE_VERSION,
      experimental: () => config().experimental,
      authorizer,
      ...(minApiVersion ? { minApiVersion } : {}),
    });
    /** A local image's platform for the routes' platform checks; undefined when there is no such image. */
    const imagePlatform = (ref: string) =>
      d.imageService.inspect(ref, API_VERSION).then(
        (v) => v as Record<string, unknown>,
        (err: unknown) => {
          if (err instanceof EngineError && err.code === 'NOT_FOUND') return undefined;
          throw err;
        },
      );
    const r = api.router;
    registerSystemRoutes(r, d.system);
    registerEventRoutes(r, d.events);
    registerSystemDfRoutes(
      r,
      new DiskUsageService({ images: d.imageService, containers, volumes: () => d.volumes.list({ usage: true }), buildCache: d.builder }),
    );
    registerContainerRoutes(r, metrics ? metrics.timed(containers, 'container', CONTAINER_ACTIONS) : containers, {
      cgroup2: cgroupVersion() === 2,
      // create's platform (API 1.41+) is checked against the local image; none: the create's own 404.
      imagePlatform,
    });
    registerNetworkRoutes(r, metrics ? metrics.timed(d.networking.api, 'network', NETWORK_ACTIONS) : d.networking.api);
    registerAttachRoutes(r, containers);
    registerAttachWsRoutes(r, containers);
    registerVolumeRoutes(r, d.volumes, d.cluster);
    registerArchiveRoutes(r, d.archives);
    registerDistributionRoutes(r, d.distribution, { imagePlatform });
    registerImageRoutes(r, d.imageService);
    registerBuildRoutes(r, d.builder, { experimental: () => config().experimental });
    registerExecRoutes(r, d.execs, {
      detachWatcher: (keys) => new EscapeMatcher(keys.length ? keys : parseDetachKeys(DEFAULT_DETACH_KEYS)),
    });
    registerStatsRoutes(r, d.stats);
    registerClusterRoutes(r, d.cluster);
    registerPluginRoutes(r, d.plugins);
    return api;
  },
};

/** The listeners open last: after the routes, the restore's network reconcile and the image cache warm-up. */
export const listenersService: DaemonService<'listeners'> = {
  id: 'listeners',
  requires: ['api', 'drain', 'imagesWarm', 'restore', 'console'],
  init: async ({ api, config, log, imagesWarm }) => {
    const c = config();
    const { specs, tlsOn } = listenSpecs(c);
    await imagesWarm.done;
    return openListeners(specs, {
      ...(tlsOn ? { tls: { cert: c.tlscert, key: c.tlskey, ca: c.tlscacert, verify: c.tlsverify } } : {}),
      group: c.group,
      log,
      onRequest: (req, res, prefix) => api.handleRequest(req, res, prefix),
      onUpgrade: (req, socket, head, prefix) => api.handleUpgrade(req, socket, head, prefix),
      onConnect: (req, socket, head, prefix) => api.handleConnect(req, socket, head, prefix),
    });
  },
  // Stop accepting first; the drain (stopped after the containers and the event streams) waits for the rest.
  stop: (listeners, { drain }) => drain.close(listeners),
};

/** The web console (--console-addr): its files and /api/... on the API server; open before the API sockets, so a daemon that answers /_ping serves its console. */
export const consoleService: DaemonService<'console'> = {
  id: 'console',
  requires: ['api', 'imagesWarm', 'restore'],
  init: async ({ api, config, log, options, imagesWarm }) => {
    const c = config();
    const addr = c['console-addr'];
    if (!addr) return undefined;
    await imagesWarm.done;
    // The API's TLS rules hold for the console too: with --tlsverify the browser needs a client certificate.
    const tls = c.tls || c.tlsverify ? loadTls({ cert: c.tlscert, key: c.tlskey, ca: c.tlscacert, verify: c.tlsverify }) : undefined;
    return startConsoleServer({
      addr,
      ...(tls ? { tls } : {}),
      secretFile: join(options.roots.dataRoot, 'console.secret'),
      assetsDir: findUpwards(import.meta.url, 'dist/console'),
      api,
      log: log.child({ module: 'console' }),
    });
  },
  // Browsers reconnect; their streams are cut at once rather than held through the drain.
  stop: (server) => server?.close(),
};

export const metricsServerService: DaemonService<'metricsServer'> = {
  id: 'metricsServer',
  requires: ['metrics'],
  init: ({ metrics, config, log }) => {
    const addr = config()['metrics-addr'];
    return metrics && addr ? startMetricsServer(addr, metrics, log) : undefined;
  },
  stop: (server) => void server?.close(),
};

/** Memory goes back to the OS once a burst of work is over (see util/heap-trim.ts). */
export const heapTrimmerService: DaemonService<'heapTrimmer'> = {
  id: 'heapTrimmer',
  requires: ['listeners'],
  init: ({ log }) => startHeapTrimmer({ log: log.child({ module: 'memory' }) }),
  stop: (trimmer) => trimmer.stop(),
};
