// Cluster mode and networking. Cluster mode is built early (it needs nothing else) so networking
// can ask whether this node manages a cluster; its modules load only for a node saved in a cluster
// or on a cluster request (cluster-lazy.ts), and its task containers run on the containers service
// once that is built. Networking brings bridges, firewall chains and surviving sandboxes back
// before any container starts, while containerd boots: the two are independent. At shutdown
// (after the containers stopped) proxies and DNS stop, and without live-restore the daemon's
// bridges and chains go too.
import { parseGenericResources } from '../../config/generic-resources.ts';
import type { TaskRuntime } from '../../cluster/agent/task-runtime.ts';
import { notFound } from '../../errors.ts';
import { ServiceGraphError } from '../../util/service-runner.ts';
import { ENGINE_VERSION } from '../../version.ts';
import { lazyClusterService } from '../cluster-lazy.ts';
import { clusterRuntime } from '../cluster-runtime.ts';
import { composeNetworking } from '../compose-network.ts';
import type { DaemonService } from './types.ts';

/** A later service's value, or undefined while it is not built yet. */
function whenBuilt<T>(get: () => T): T | undefined {
  try {
    return get();
  } catch (err) {
    if (err instanceof ServiceGraphError) return undefined; // not built yet: the caller waits for it
    throw err;
  }
}

export const clusterService: DaemonService<'cluster'> = {
  id: 'cluster',
  requires: ['events'],
  uses: ['networking', 'containers', 'runs', 'images', 'distribution'],
  init: ({ options, log, config, events }, later) => {
    const networking = later('networking');
    const [containers, runs, images, distribution] = [later('containers'), later('runs'), later('images'), later('distribution')];
    let runtime: TaskRuntime | undefined;
    return lazyClusterService({
      dataRoot: options.roots.dataRoot,
      execRoot: options.roots.execRoot,
      log,
      engineVersion: ENGINE_VERSION,
      engineLabels: () => config().labels,
      // Called only once the cluster runs, after start-up.
      overlay: () => networking().overlay,
      genericResources: () => parseGenericResources(config()['node-generic-resources']),
      defaultAdvertiseAddr: () => config()['cluster-default-advertise-addr'] || undefined,
      // The daemon's own network subnets, which an advertise address is never picked from.
      managedSubnets: () =>
        (networking().api.list(new Map()) as Array<{ IPAM?: { Config?: Array<{ Subnet?: string }> | null } }>).flatMap((n) =>
          (n.IPAM?.Config ?? []).flatMap((c) => (c.Subnet ? [c.Subnet] : [])),
        ),
      controlPlaneMtu: () => config()['network-control-plane-mtu'],
      events,
      // The agent waits until the containers service is built.
      runtime: () => {
        const built = whenBuilt(containers);
        if (built && !runtime)
          runtime = clusterRuntime(built, runs(), options.roots.execRoot, () => networking().overlay, {
            store: images(),
            distribution: distribution(),
          });
        return runtime;
      },
    });
  },
  stop: (cluster) => cluster.shutdown(),
};

/**
 * Cluster mode's agent stops before the containers do (as dockerd's cluster clean-up comes before
 * its daemon's shutdown): it would otherwise start or replace task containers while they stop, and
 * those kept their bridges, chains and shims past the daemon. The rest of cluster mode stops after
 * them, so their overlay endpoints are still released.
 */
export const clusterTasksService: DaemonService<'clusterTasks'> = {
  id: 'clusterTasks',
  requires: ['cluster', 'containers'],
  init: () => undefined,
  stop: (_none, { cluster }) => cluster.stopTasks(),
};

export const networkingService: DaemonService<'networking'> = {
  id: 'networking',
  requires: ['db', 'events', 'engineId', 'cluster'],
  // Networking finds containers by reference (DNS answers, links, connect); until the containers
  // service is built no container is known.
  uses: ['containers'],
  init: async ({ db, config, log, options, events, engineId, cluster }, later) => {
    const containers = later('containers');
    const networking = composeNetworking({
      db,
      config,
      log: log.child({ module: 'network' }),
      execRoot: options.roots.execRoot,
      events,
      daemonId: engineId,
      clusterManager: () => cluster.pingState() === 'active/manager',
      overlayControl: () => cluster.overlayControl(),
      containers: {
        find: (ref) => {
          const built = whenBuilt(containers);
          if (!built) throw notFound(`No such container: ${ref}`);
          return built.find(ref);
        },
      },
    });
    await networking.lifecycle.init();
    return networking;
  },
  stop: (networking, { config }) => networking.lifecycle.shutdown(config()['live-restore']),
};
