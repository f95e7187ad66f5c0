// The cluster backend of the /swarm, /nodes, /services, /tasks, /secrets and /configs routes, and
// the node's cluster state for /info and /_ping. A node is inactive (answers as inactive.ts), a
// manager (runs etcd: manager.ts) or a worker (heartbeats to managers: worker.ts); its state is
// saved under <data-root>/cluster and restored when the daemon starts. Every node in a cluster runs
// an agent (agent.ts) that runs its tasks on the local engine. Secrets and configs: secrets-api.ts.
// The lifecycle's parts are in lifecycle/: where the node stands (node-phase.ts), init/join/leave
// (membership.ts), restore and unlock (rejoin.ts), role changes (role-change.ts) and what a role
// runs (role-runner.ts); this class sequences them and answers the routes.
import type { GenericResource } from '../config/generic-resources.ts';
import type {
  ClusterLogOptions,
  ClusterObject,
  ClusterObjectKind,
  CreatableKind,
  MutableKind,
  ObjectUpdateOptions,
  SwarmInitRequest,
  SwarmJoinRequest,
  SwarmUpdateOptions,
} from '../types/cluster.ts';
import type { Logger } from '../util/log.ts';
import { parseAddr } from './node/addresses.ts';
import { InactiveCluster } from './inactive.ts';
import { LocalStateFiles } from './node/local-state.ts';
import type { Manager } from './manager/manager.ts';
import type { EventPublisher } from '../events/bus.ts';
import type { TaskRuntime } from './agent/task-runtime.ts';
import { ControlMtu, DEFAULT_CONTROL_MTU } from './node/control-mtu.ts';
import { ClusterObjects } from './cluster-objects.ts';
import { NodeRuntime } from './node-runtime.ts';
import type { OverlayControl, OverlayHost } from '../network/overlay/contract.ts';
import { NodePhase } from './lifecycle/node-phase.ts';
import { RoleRunner } from './lifecycle/role-runner.ts';
import { RoleChanges } from './lifecycle/role-change.ts';
import { Membership } from './lifecycle/membership.ts';
import { Rejoin } from './lifecycle/rejoin.ts';

export interface ClusterServiceDeps {
  dataRoot: string;
  log: Logger;
  engineVersion: string;
  /** The daemon's `labels` (key=value), shown as the node's engine labels. */
  engineLabels: () => string[];
  /** The network layer's overlay driver (the cluster's networks and endpoints are pushed to it). */
  overlay?: () => OverlayHost | undefined;
  /** --cluster-default-advertise-addr: an IP or interface name, used when init/join give no AdvertiseAddr. */
  defaultAdvertiseAddr?: () => string | undefined;
  /** The subnets of the daemon's own networks (left out when the system address is detected). */
  managedSubnets?: () => string[];
  /** --network-control-plane-mtu (control-mtu.ts). */
  controlPlaneMtu?: () => number;
  /** --node-generic-resource, advertised in the node's Description.Resources. */
  genericResources?: () => GenericResource[];
  /** The local engine, once built, for the agent to run tasks on. */
  runtime?: () => TaskRuntime | undefined;
  events?: EventPublisher;
  /** Where a manager's node key is written in the clear for etcd (autolock: local-state.ts). */
  execRoot?: string;
}

export class ClusterService {
  /** Where the node stands, and the queue of lifecycle changes (lifecycle/node-phase.ts). */
  private readonly phase: NodePhase;
  /** What runs while the node is in a cluster (node-runtime.ts). */
  private readonly node: NodeRuntime;
  private readonly files: LocalStateFiles;
  private readonly inactive = new InactiveCluster();
  private readonly controlMtu: ControlMtu;
  /** init, join, leave (lifecycle/membership.ts). */
  private readonly membership: Membership;
  /** restore at daemon start, unlock (lifecycle/rejoin.ts). */
  private readonly rejoin: Rejoin;
  readonly objects: ClusterObjects; // nodes, services, tasks, secrets, configs, volumes

  constructor(deps: ClusterServiceDeps) {
    const files = (this.files = new LocalStateFiles(deps.dataRoot, deps.execRoot));
    const log = deps.log.child({ module: 'cluster' });
    const phase = (this.phase = new NodePhase(log));
    const controlMtu = (this.controlMtu = new ControlMtu(deps.controlPlaneMtu?.() ?? DEFAULT_CONTROL_MTU, log));
    const node = (this.node = new NodeRuntime({
      log,
      files,
      overlay: deps.overlay,
      runtime: deps.runtime,
      events: deps.events,
      onHeartbeat: (r) => void roles.switchRole(r),
    }));
    const runner = new RoleRunner({
      ...{ node, files, phase, controlMtu, facts: deps, events: deps.events, rootLog: deps.log, log },
      roleCheck: () => roles.checkRole(),
      keyCheck: (kekId) => roles.syncUnlockKey(kekId),
    });
    const roles = new RoleChanges({ node, files, phase, runner, log });
    const managedSubnets = () => deps.managedSubnets?.() ?? [];
    this.membership = new Membership({
      node,
      files,
      phase,
      runner,
      controlMtu,
      defaultAdvertiseAddr: deps.defaultAdvertiseAddr,
      managedSubnets,
      log,
    });
    this.rejoin = new Rejoin({ node, files, phase, runner, roles, log });
    this.objects = new ClusterObjects({
      manager: () => this.requireManager(),
      isManager: () => !!node.manager && phase.phase === 'active',
      runtime: () => deps.runtime?.(),
      localLogs: (ids, req, signal) => node.localLogs(ids, req, signal),
      certs: () => files.readCerts(),
      log,
    });
  }

  /** Brings a node that was in a cluster back into it (daemon start); never throws. */
  restore(): Promise<void> {
    return this.phase.serial(() => this.rejoin.restore());
  }

  /** Overlay networks' cluster side (managers only; undefined elsewhere). */
  overlayControl(): OverlayControl | undefined {
    return this.node.overlayControl(this.phase.phase === 'active');
  }

  // ---- /_ping and /info --------------------------------------------------------------------------

  /** The Swarm header of /_ping. */
  pingState(): string {
    if (this.phase.phase === 'active') return this.node.manager ? 'active/manager' : 'active/worker';
    return this.phase.phase;
  }

  /** /info's Swarm section. */
  async info(): Promise<ClusterObject> {
    const { phase, error, lockedState } = this.phase;
    const state = this.node.state ?? lockedState ?? undefined;
    if (phase === 'inactive' || !state) {
      return { NodeID: '', NodeAddr: '', LocalNodeState: phase, ControlAvailable: false, Error: error, RemoteManagers: null };
    }
    const base: ClusterObject = {
      NodeID: state.nodeId,
      NodeAddr: parseAddr(state.advertiseAddr, 0, 'advertise address').host,
      LocalNodeState: phase,
      ControlAvailable: !!this.node.manager,
      Error: this.node.worker?.lastError ?? '',
      RemoteManagers: state.managers,
    };
    const m = this.node.manager;
    if (!m) return base;
    try {
      return { ...base, ...(await m.info()) };
    } catch (err) {
      return { ...base, Error: (err as Error).message };
    }
  }

  private requireManager(): Manager {
    const m = this.node.manager;
    if (m && this.phase.phase === 'active') return m;
    throw this.phase.notManager(!!this.node.worker);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------

  init(req: SwarmInitRequest): Promise<string> {
    return this.phase.serial(() => this.membership.init(req));
  }

  join(req: SwarmJoinRequest): Promise<void> {
    return this.phase.serial(() => this.membership.join(req));
  }

  leave(force: boolean): Promise<void> {
    return this.phase.serial(() => this.membership.leave(force));
  }

  // Daemon shutdown: `tasks` (before the containers stop) ends the agent for good, so no task
  // container starts meanwhile; then etcd, the endpoint, heartbeats. The node stays in its cluster.
  shutdown(step: 'tasks' | 'rest' = 'rest'): Promise<void> {
    const stopped = this.node.stopTasks(); // at once: no agent starts again, even queued behind a change
    return this.phase.serial(async () => {
      await stopped;
      if (step === 'tasks') return;
      await this.node.stopRole({ leaving: false });
      await this.controlMtu.remove();
      this.files.dropRunKey(); // overlay devices: networking's shutdown removes them
    });
  }

  // ---- the ClusterBackend ------------------------------------------------------------------------

  async inspectCluster(): Promise<ClusterObject> {
    if (this.phase.phase === 'inactive') return this.inactive.inspectCluster();
    return this.requireManager().settings.inspect();
  }

  async updateCluster(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void> {
    await this.requireManager().settings.update(spec, opts);
  }

  async unlockKey(): Promise<{ UnlockKey: string }> {
    if (this.phase.phase === 'inactive') return this.inactive.unlockKey();
    return this.requireManager().settings.unlockKeyView();
  }

  /** A locked manager (autolock) opens its node key with the unlock key and rejoins its cluster. */
  unlock(keyText: string): Promise<void> {
    return this.phase.serial(async () => {
      if (this.phase.phase === 'inactive') return this.inactive.unlock();
      return this.rejoin.unlock(keyText);
    });
  }

  list(kind: ClusterObjectKind, filters: Map<string, string[]>, opts: { status?: boolean } = {}): Promise<ClusterObject[]> {
    return this.objects.list(kind, filters, opts);
  }

  inspect(kind: ClusterObjectKind, id: string, opts: { insertDefaults?: boolean } = {}): Promise<ClusterObject> {
    return this.objects.inspect(kind, id, opts);
  }

  create(
    kind: CreatableKind,
    spec: ClusterObject = {},
    opts: { registryAuth?: string; queryRegistry?: boolean } = {},
  ): Promise<{ ID: string; Warnings?: string[] }> {
    return this.objects.create(kind, spec, opts);
  }

  update(kind: MutableKind, id: string, spec: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings?: string[] }> {
    return this.objects.update(kind, id, spec, opts);
  }

  remove(kind: MutableKind, id: string, opts: { force: boolean }): Promise<void> {
    return this.objects.remove(kind, id, opts);
  }

  logs(kind: 'services' | 'tasks', id: string, opts: ClusterLogOptions): Promise<AsyncIterable<Buffer>> {
    return this.objects.logs(kind, id, opts);
  }
}
