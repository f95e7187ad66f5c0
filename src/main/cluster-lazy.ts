// Cluster mode, loaded when the node is (or is becoming) part of a cluster: a node that was never in
// one does not parse or run cluster/ at start-up. Until loaded, the node is inactive, and what an
// inactive node shows without a request to the cluster code — /_ping's Swarm header, /info's Swarm
// section — is answered here, as cluster/service.ts answers it. Every other call (the /swarm, /nodes,
// /services, … routes, dockerd's 503s included) loads the service and goes to it. A node saved in a
// cluster loads it at start-up and restores as before; /_ping and /info say "pending" meanwhile.
import type { ClusterBackend } from '../api/routes/cluster.ts';
import type { ClusterVolumesBackend } from '../api/routes/volumes.ts';
import type { ClusterService, ClusterServiceDeps } from '../cluster/service.ts';
import { LocalStateFiles } from '../cluster/node/local-state.ts';
import type { OverlayControl } from '../network/overlay/contract.ts';
import type { ClusterObject } from '../types/cluster.ts';

export interface LazyClusterService extends ClusterBackend, ClusterVolumesBackend {
  restore(): Promise<void>;
  /** Shutdown's first step, before the containers stop: no task container starts any more. */
  stopTasks(): Promise<void>;
  shutdown(): Promise<void>;
  pingState(): string;
  info(): Promise<ClusterObject>;
  /** Overlay networks' cluster side; undefined until cluster mode is loaded. */
  overlayControl(): OverlayControl | undefined;
}

export function lazyClusterService(deps: ClusterServiceDeps): LazyClusterService {
  let loaded: ClusterService | undefined;
  let loading: Promise<ClusterService> | undefined;
  let restoring: Promise<void> | undefined;
  const load = (restore = false) =>
    (loading ??= import('../cluster/service.ts').then((m) => {
      const s = new m.ClusterService(deps);
      // Queued before any caller that waited for the load: restore comes first, as at start-up.
      if (restore) restoring = s.restore();
      loaded = s;
      return s;
    }));
  const svc = () => (loaded ? Promise.resolve(loaded) : load());
  return {
    restore() {
      let saved = true;
      try {
        saved = new LocalStateFiles(deps.dataRoot).read() !== null;
      } catch {
        // Unreadable: the service reads it again and reports it as cluster mode does (phase "error").
      }
      if (!saved) return Promise.resolve();
      return load(true).then(() => restoring);
    },
    async stopTasks() {
      await (loaded ?? (loading ? await loading.catch(() => undefined) : undefined))?.shutdown('tasks'); // a failed load rejected its caller: nothing loaded to stop
    },
    async shutdown() {
      await (loaded ?? (loading ? await loading.catch(() => undefined) : undefined))?.shutdown(); // a failed load rejected its caller: nothing loaded to shut down
    },
    // Loading (only for a node saved in a cluster): the service's phase is "pending" from its first step.
    overlayControl: () => loaded?.overlayControl(),
    pingState: () => loaded?.pingState() ?? (loading ? 'pending' : 'inactive'),
    info: () =>
      loaded?.info() ??
      Promise.resolve({
        NodeID: '',
        NodeAddr: '',
        LocalNodeState: loading ? 'pending' : 'inactive',
        ControlAvailable: false,
        Error: '',
        RemoteManagers: null,
      }),
    inspectCluster: async () => (await svc()).inspectCluster(),
    init: async (req) => (await svc()).init(req),
    join: async (req) => (await svc()).join(req),
    leave: async (force) => (await svc()).leave(force),
    updateCluster: async (spec, opts) => (await svc()).updateCluster(spec, opts),
    unlockKey: async () => (await svc()).unlockKey(),
    unlock: async (key) => (await svc()).unlock(key),
    list: async (kind, filters, opts) => (await svc()).list(kind, filters, opts),
    inspect: async (kind, id, opts) => (await svc()).inspect(kind, id, opts),
    create: async (kind, spec, opts) => (await svc()).create(kind, spec, opts),
    update: async (kind, id, spec, opts) => (await svc()).update(kind, id, spec, opts),
    remove: async (kind, id, opts) => (await svc()).remove(kind, id, opts),
    logs: async (kind, id, opts) => (await svc()).logs(kind, id, opts),
    // Not loaded: not a manager (the volume routes then never ask the cluster).
    isManager: () => loaded?.objects.isManager() ?? false,
    listVolumes: async () => (await svc()).objects.volumes().list(),
    getVolume: async (ref) => (await svc()).objects.volumes().get(ref),
    createVolume: async (req) => (await svc()).objects.volumes().create(req),
    updateVolume: async (ref, version, body) => (await svc()).objects.volumes().update(ref, version, body),
    removeVolume: async (ref, force) => (await svc()).objects.volumes().remove(ref, force),
  };
}
