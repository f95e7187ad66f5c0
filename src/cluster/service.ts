// The cluster backend of the /swarm, /nodes, /services, /tasks, /secrets and /configs routes, and
// the node's cluster state for /info and /_ping. A node is inactive (answers as inactive.ts), a
// manager (runs etcd: manager.ts) or a worker (heartbeats to managers: worker.ts); its state is
// saved under <data-root>/cluster and restored when the daemon starts. Every node in a cluster runs
// an agent (agent.ts) that runs its tasks on the local engine. Secrets and configs: secrets-api.ts.
import type { GenericResource } from '../config/generic-resources.ts';
import { conflict, invalidParameter, unauthorized, unavailable } from '../errors.ts';
import { LOCKED, parseUnlockKey } from './ca/autolock.ts';
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
import { chooseAdvertise, DEFAULT_LISTEN_PORT, formatHostPort, joinAdvertise, parseAddr } from './node/addresses.ts';
import { identityOf, issuerInChain, newKeyPair } from './ca/ca.ts';
import { callManager, type HeartbeatResponse, type JoinRequest, type JoinResponse } from './node/endpoint.ts';
import { InactiveCluster, NOT_A_MANAGER, NOT_IN_A_CLUSTER } from './inactive.ts';
import { LocalStateFiles, type LocalClusterState, type NodeCerts, type RemoteManager } from './node/local-state.ts';
import { Manager, type ManagerEnv } from './manager/manager.ts';
import { newNodeRecord } from './manager/nodes.ts';
import { mergeInitSpec } from './ca/swarm-object.ts';
import { caDigest, tokenMatchesCa } from './ca/tokens.ts';
import type { EventPublisher } from '../events/bus.ts';
import type { TaskRuntime } from './agent/task-runtime.ts';
import { ControlMtu, controlPorts, DEFAULT_CONTROL_MTU } from './node/control-mtu.ts';
import { ClusterObjects } from './cluster-objects.ts';
import { NodeRuntime } from './node-runtime.ts';
import { planNewCluster } from './new-cluster.ts';
import { askRole, askToPromote, certFitsKey, checkAvailability, describeNode, holdUnlockKey } from './node/node-helpers.ts';
import type { OverlayControl, OverlayHost } from '../network/overlay/contract.ts';

export const ALREADY_IN_A_CLUSTER =
  'This node is already part of a swarm. Use "docker swarm leave" to leave this swarm and join another one.';
export const WORKER_NOT_MANAGER =
  "This node is not a swarm manager. Worker nodes can't be used to view or modify cluster state. Please run this command on a manager node or promote the current node to a manager.";

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

type Phase = 'inactive' | 'pending' | 'active' | 'error' | 'locked';

export class ClusterService {
  private phase: Phase = 'inactive';
  /** What runs while the node is in a cluster (node-runtime.ts). */
  private readonly node: NodeRuntime;
  private readonly managedSubnets = () => this.deps.managedSubnets?.() ?? [];
  private error = '';
  private roleChecking = false;
  private keySyncing = false;
  /** A manager restarted with its node key sealed (autolock), until `swarm unlock`. */
  private lockedState: LocalClusterState | null = null;
  private busy: Promise<unknown> = Promise.resolve();
  private readonly files: LocalStateFiles;
  private readonly log: Logger;
  private readonly inactive = new InactiveCluster();
  private readonly controlMtu: ControlMtu;
  readonly objects: ClusterObjects; // nodes, services, tasks, secrets, configs, volumes

  constructor(private readonly deps: ClusterServiceDeps) {
    this.files = new LocalStateFiles(deps.dataRoot, deps.execRoot);
    this.log = deps.log.child({ module: 'cluster' });
    this.controlMtu = new ControlMtu(deps.controlPlaneMtu?.() ?? DEFAULT_CONTROL_MTU, this.log);
    this.node = new NodeRuntime({
      log: this.log,
      files: this.files,
      overlay: deps.overlay,
      runtime: deps.runtime,
      events: deps.events,
      onHeartbeat: (r) => void this.switchRole(r),
    });
    this.objects = new ClusterObjects({
      manager: () => this.requireManager(),
      isManager: () => !!this.node.manager && this.phase === 'active',
      runtime: () => this.deps.runtime?.(),
      localLogs: (ids, req, signal) => this.node.localLogs(ids, req, signal),
      certs: () => this.files.readCerts(),
      log: this.log,
    });
  }

  /** --network-control-plane-mtu on this node's control ports and those of the managers it knows. */
  private async applyControlMtu(st: LocalClusterState): Promise<void> {
    const adv = parseAddr(st.advertiseAddr, 0, 'advertise address');
    const ports = [adv.port, ...st.managers.map((m) => parseAddr(m.Addr, DEFAULT_LISTEN_PORT, 'manager address').port)];
    await this.controlMtu.apply(st.nodeId, adv.host, ports.flatMap(controlPorts));
  }

  /** One lifecycle change at a time (init, join, leave, restore, shutdown). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(fn, fn);
    this.busy = run.catch(() => undefined); // The caller gets the failure through `run`; the queue only needs to move on.
    return run;
  }

  /** Brings a node that was in a cluster back into it (daemon start); never throws. */
  restore(): Promise<void> {
    return this.serial(async () => {
      let state: LocalClusterState | null;
      try {
        state = this.files.read();
      } catch (err) {
        this.fail(`cannot read the saved cluster state: ${(err as Error).message}`);
        return;
      }
      if (!state) return;
      if (state.role === 'manager' && this.files.keySealed()) {
        this.files.dropRunKey();
        this.lockedState = state;
        this.phase = 'locked';
        this.log.warn('the node is locked (autolock): it rejoins its cluster after `docker swarm unlock`');
        return;
      }
      this.phase = 'pending';
      try {
        await this.run(state);
        this.log.info('back in the cluster', { node: state.nodeId, role: state.role });
      } catch (err) {
        // A manager demoted while it was down: its etcd member is gone; another manager says so.
        const r = state.role === 'manager' ? await this.askRole(state, state.managers).catch(() => null) : null; // no manager answers: the rejoin's own error is reported below
        if (r?.role === 'worker') return this.becomeRole(state, r);
        this.fail(`cannot rejoin the cluster: ${(err as Error).message}`);
      }
    });
  }

  private fail(msg: string): void {
    this.phase = 'error';
    this.error = msg;
    this.log.error(msg);
  }

  /** Starts the runtime of a saved state: a manager's etcd and endpoint, or a worker's heartbeat. */
  private async run(state: LocalClusterState, promote?: () => Promise<void>): Promise<void> {
    const certs = this.files.readCerts();
    if (identityOf(certs.certPem).nodeId !== state.nodeId) throw new Error('the node certificate does not match the saved node ID');
    // A role change runs this again: a worker's endpoint would hold the listen address a manager needs.
    this.node.stopNodeEndpoint();
    await this.applyControlMtu(state); // before the first control connection (the MSS is set at SYN)
    if (state.role === 'manager') {
      this.files.resetEtcdTrust();
      const m = await Manager.start(this.managerEnv(certs.caPem), state, certs, promote ? { promote } : { restart: true });
      try {
        await m.serve();
      } catch (err) {
        await m.stop();
        throw err;
      }
      await this.node.attachManager(m, certs);
    } else {
      await this.node.startWorker(state, certs);
    }
    this.phase = 'active';
    this.error = '';
  }

  private managerEnv(caPem: string): ManagerEnv {
    return {
      log: this.deps.log,
      files: this.files,
      describe: () => describeNode(this.deps, caPem),
      overlay: this.node.serveOverlay,
      events: this.deps.events,
      logs: this.node.serveLogs,
      roleCheck: () => this.checkRole(),
      caCheck: (ca) => this.node.tls.check(ca),
      tlsInfo: () => this.node.renewalInfo(),
      keyCheck: (kekId) => this.syncUnlockKey(kekId),
      holdKey: async (kekId, managers) => void (await holdUnlockKey(this.files, managers, kekId, this.log)),
    };
  }

  /**
   * The cluster record's autolock key changed (turned on, rotated, off) on another manager: off, the
   * node key goes back in the clear; else the key is fetched from a manager that holds it (matching
   * the record's KEK) and the node key is sealed with it. One sync at a time.
   */
  private syncUnlockKey(want: string | null): void {
    const m = this.node.manager;
    if (!m || this.keySyncing || this.phase !== 'active') return;
    this.keySyncing = true;
    void (async () => {
      if (want === null) {
        this.files.rekey(null);
        this.log.info('autolock is off: the node key is kept in the clear');
      } else if (!(await holdUnlockKey(this.files, m.otherManagers(), want, this.log))) return;
      await m.keysChanged(); // the records' data key may open now
    })()
      .catch((err: Error) => this.log.warn('autolock key sync failed', { error: err.message }))
      .finally(() => (this.keySyncing = false));
  }

  private promoter(managers: RemoteManager[], certs: NodeCerts): () => Promise<void> {
    return () => askToPromote(managers, certs, this.log);
  }

  /**
   * A manager whose record says worker, or whose store does not answer: another manager's heartbeat
   * answer tells whether it was demoted (with its worker certificate). One check at a time.
   */
  private checkRole(): void {
    const m = this.node.manager;
    if (!m || this.roleChecking || this.phase !== 'active') return;
    this.roleChecking = true;
    void this.askRole(m.state, m.otherManagers())
      .then((r) => (r?.role === 'worker' ? this.switchRole(r) : undefined))
      .catch((err: Error) => this.log.warn('role check failed', { error: err.message }))
      .finally(() => (this.roleChecking = false));
  }

  /**
   * Turns the node into the role a heartbeat answer gives (a promotion or demotion): the runtime of
   * the old role stops (its etcd data goes), the certificate for the new one is saved, and the node
   * runs as the new role; its task containers keep running and the new agent adopts them.
   */
  private switchRole(r: HeartbeatResponse): Promise<void> {
    return this.serial(async () => {
      const cur = this.node.state;
      if (cur && this.phase === 'active') await this.becomeRole(cur, r);
    });
  }

  private async becomeRole(cur: LocalClusterState, r: HeartbeatResponse): Promise<void> {
    if (!r.role || r.role === cur.role || !r.certPem) return;
    if (r.role === 'manager' && !r.etcd) return;
    const certs = this.files.readCerts();
    const id = identityOf(r.certPem);
    if (!issuerInChain(r.certPem, certs.caPem) || id.nodeId !== cur.nodeId || id.role !== r.role) {
      this.log.warn('a heartbeat answer carried a certificate that is not for this node and role; ignored');
      return;
    }
    // Renewed (a new key) since the heartbeat that brought it: the next answer carries one for the new key.
    if (!certFitsKey(r.certPem, certs.keyPem)) return;
    this.log.info('the node changes its role', { node: cur.nodeId, from: cur.role, to: r.role });
    this.phase = 'pending';
    await this.node.stopRole({ leaving: false });
    this.files.removeEtcd();
    if (r.role === 'worker') this.files.setUnlockKey(null); // autolock seals managers' keys only
    const next: LocalClusterState = { ...cur, role: r.role, managers: r.managers.filter((m) => m.NodeID !== cur.nodeId) };
    delete next.etcd;
    if (r.role === 'manager')
      next.etcd = { initialCluster: r.etcd!.initialCluster, initialState: 'existing', clusterToken: r.etcd!.clusterToken };
    const nextCerts = { ...certs, certPem: r.certPem };
    this.files.writeCerts(nextCerts);
    this.files.write(next);
    try {
      await this.run(next, r.role === 'manager' ? this.promoter(next.managers, nextCerts) : undefined);
      this.log.info('the node runs in its new role', { node: cur.nodeId, role: r.role });
    } catch (err) {
      this.fail(`cannot run as a ${r.role} after the role change: ${(err as Error).message}`);
    }
  }

  /** Another manager's heartbeat answer for this node (its role as the store has it), or null. */
  private askRole(state: LocalClusterState, managers: RemoteManager[]): Promise<HeartbeatResponse | null> {
    return askRole(state, managers, this.files.readCerts(), this.log);
  }

  /** Overlay networks' cluster side (managers only; undefined elsewhere). */
  overlayControl(): OverlayControl | undefined {
    return this.node.overlayControl(this.phase === 'active');
  }

  // ---- /_ping and /info --------------------------------------------------------------------------

  /** The Swarm header of /_ping. */
  pingState(): string {
    if (this.phase === 'active') return this.node.manager ? 'active/manager' : 'active/worker';
    return this.phase;
  }

  /** /info's Swarm section. */
  async info(): Promise<ClusterObject> {
    const state = this.node.state ?? this.lockedState ?? undefined;
    if (this.phase === 'inactive' || !state) {
      return { NodeID: '', NodeAddr: '', LocalNodeState: this.phase, ControlAvailable: false, Error: this.error, RemoteManagers: null };
    }
    const base: ClusterObject = {
      NodeID: state.nodeId,
      NodeAddr: parseAddr(state.advertiseAddr, 0, 'advertise address').host,
      LocalNodeState: this.phase,
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
    if (m && this.phase === 'active') return m;
    if (this.phase === 'locked') throw unavailable(LOCKED);
    if (this.node.worker) throw unavailable(WORKER_NOT_MANAGER);
    if (this.phase === 'pending') throw unavailable('This node is still starting its cluster membership; try again shortly.');
    if (this.phase === 'error') throw unavailable(this.error);
    throw unavailable(NOT_A_MANAGER);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------

  init(req: SwarmInitRequest): Promise<string> {
    return this.serial(async () => {
      if (req.ForceNewCluster && this.phase !== 'inactive') return this.forceNewCluster(req.Spec);
      if (this.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
      const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
      const adv = await chooseAdvertise(listen, req.AdvertiseAddr, this.deps.defaultAdvertiseAddr?.(), this.managedSubnets);
      const plan = await planNewCluster(req, listen, adv);
      const { state, certs } = plan;
      this.files.remove(); // what a failed attempt may have left
      if (plan.unlockKey) this.files.setUnlockKey(plan.unlockKey); // autolock from the start
      this.files.writeCerts(certs);
      this.files.write(state);
      let m: Manager | null = null;
      await this.applyControlMtu(state); // before the first control connection (the MSS is set at SYN)
      const { nodeId, clusterId, advertiseAddr } = state;
      try {
        m = await Manager.start(this.managerEnv(certs.caPem), state, certs);
        const self = newNodeRecord(nodeId, 'manager', advertiseAddr, describeNode(this.deps, certs.caPem), plan.availability);
        await m.settings.bootstrap(plan.record, self);
        await m.serve();
      } catch (err) {
        await m?.stop().catch((e: Error) => this.log.warn('stopping the half-made cluster failed', { error: e.message }));
        this.files.remove();
        await this.controlMtu.remove();
        throw err;
      }
      await this.node.attachManager(m, certs);
      this.phase = 'active';
      this.error = '';
      // dockerd makes the ingress network at init (its routing mesh is not built here).
      // The node's networking has it when init answers, as dockerd's: a client may remove it next.
      const networks = this.node.clusterNetworks();
      await networks
        ?.create({ Name: 'ingress', Driver: 'overlay', Ingress: true })
        .then(() => networks.refresh())
        .catch((err: Error) => this.log.warn('creating the ingress network failed', { error: err.message }));
      this.log.info('cluster initialised', { node: nodeId, cluster: clusterId, addr: advertiseAddr });
      return nodeId;
    });
  }

  /**
   * `swarm init --force-new-cluster` on a manager (its quorum lost): its etcd member restarts with
   * etcd's --force-new-cluster (a one-member cluster keeping the data), and the other managers' node
   * records go, as dockerd drops them; workers, services and tasks stay. The addresses are kept; the
   * request's spec is merged in as dockerd does (its non-zero fields; autolock as given).
   */
  private async forceNewCluster(spec: ClusterObject | undefined): Promise<string> {
    if (this.phase === 'locked') throw unavailable(LOCKED);
    const state = this.node.manager?.state ?? this.files.read();
    if (!state || state.role !== 'manager') throw unavailable(ALREADY_IN_A_CLUSTER);
    this.phase = 'pending';
    await this.node.stopRole({ leaving: false });
    const next: LocalClusterState = { ...state, managers: [{ NodeID: state.nodeId, Addr: state.advertiseAddr }] };
    this.files.write(next);
    try {
      this.files.resetEtcdTrust();
      const certs = this.files.readCerts();
      const m = await Manager.start(this.managerEnv(certs.caPem), next, certs, { forceNewCluster: true });
      try {
        await m.nodes.dropOtherManagers();
        await m.serve();
        const c = await m.settings.get();
        await m.settings.update(mergeInitSpec(c.value.Spec, spec), {
          version: c.version,
          rotateWorkerToken: false,
          rotateManagerToken: false,
          rotateManagerUnlockKey: false,
        });
      } catch (err) {
        await m.stop();
        throw err;
      }
      await this.node.attachManager(m, certs);
      this.phase = 'active';
      this.error = '';
    } catch (err) {
      this.fail(`cannot force a new cluster: ${(err as Error).message}`);
      throw err;
    }
    this.log.info('a new cluster forced from this manager (the other managers dropped)', { node: state.nodeId });
    return state.nodeId;
  }

  join(req: SwarmJoinRequest): Promise<void> {
    return this.serial(async () => {
      if (this.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
      if (!req.RemoteAddrs?.length) throw invalidParameter('at least 1 RemoteAddr is required to join');
      const token = req.JoinToken ?? '';
      const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
      const adv = await joinAdvertise(listen, req.AdvertiseAddr, this.managedSubnets);
      if (req.Availability) checkAvailability(req.Availability);
      const remote = formatHostPort(parseAddr(req.RemoteAddrs[0]!, DEFAULT_LISTEN_PORT, 'remote address'));
      const { caPem } = await callManager<{ caPem: string }>(remote, 'GET', '/ca', undefined, {});
      if (!tokenMatchesCa(token, caPem)) throw invalidParameter(`remote CA does not match fingerprint. Expected: ${caDigest(caPem)}`);
      const keys = newKeyPair();
      const body: JoinRequest = {
        token,
        publicKeyPem: keys.publicKeyPem,
        advertiseAddr: formatHostPort(adv),
        listenAddr: formatHostPort(listen),
        dataPathAddr: req.DataPathAddr ?? '',
        description: describeNode(this.deps, caPem),
        ...(req.Availability ? { availability: checkAvailability(req.Availability) } : {}),
      };
      const res = await callManager<JoinResponse>(remote, 'POST', '/join', body, { caPem, timeoutMs: 60_000 });
      if (!issuerInChain(res.certPem, caPem) || identityOf(res.certPem).nodeId !== res.nodeId)
        throw unavailable('the manager answered with a certificate of another CA or node');
      const state: LocalClusterState = {
        nodeId: res.nodeId,
        clusterId: res.clusterId,
        role: res.role,
        listenAddr: formatHostPort(listen),
        advertiseAddr: res.advertiseAddr ?? formatHostPort(adv),
        dataPathAddr: req.DataPathAddr ?? '',
        managers: res.managers,
        ...(res.etcd
          ? { etcd: { initialCluster: res.etcd.initialCluster, initialState: 'existing' as const, clusterToken: res.etcd.clusterToken } }
          : {}),
      };
      this.files.remove();
      this.files.writeCerts({ caPem, certPem: res.certPem, keyPem: keys.keyPem });
      this.files.write(state);
      const certs = { caPem, certPem: res.certPem, keyPem: keys.keyPem };
      try {
        await this.run(state, res.role === 'manager' ? this.promoter([{ NodeID: '', Addr: remote }], certs) : undefined);
      } catch (err) {
        this.files.remove();
        await this.controlMtu.remove();
        this.phase = 'inactive';
        await callManager(remote, 'POST', '/leave', { abort: true }, { caPem, certs }).catch((e: Error) =>
          this.log.warn('could not undo the join at the manager', { error: e.message }),
        );
        throw err;
      }
      this.log.info('joined the cluster', { node: res.nodeId, role: res.role, via: remote });
    });
  }

  leave(force: boolean): Promise<void> {
    return this.serial(async () => {
      if (this.phase === 'inactive') throw unavailable(NOT_IN_A_CLUSTER);
      if (this.phase === 'locked' && !force) throw unavailable(LOCKED); // as dockerd
      this.lockedState = null;
      await this.node.manager?.nodes.leaveCluster(force); // refuses without force, as dockerd
      await this.node.stopRole({ leaving: true });
      await this.node.removeTasks();
      this.files.remove();
      await this.controlMtu.remove();
      this.phase = 'inactive';
      this.error = '';
      this.log.info('left the cluster');
    });
  }

  // Daemon shutdown: `tasks` (before the containers stop) ends the agent for good, so no task
  // container starts meanwhile; then etcd, the endpoint, heartbeats. The node stays in its cluster.
  shutdown(step: 'tasks' | 'rest' = 'rest'): Promise<void> {
    const stopped = this.node.stopTasks(); // at once: no agent starts again, even queued behind a change
    return this.serial(async () => {
      await stopped;
      if (step === 'tasks') return;
      await this.node.stopRole({ leaving: false });
      await this.controlMtu.remove();
      this.files.dropRunKey(); // overlay devices: networking's shutdown removes them
    });
  }

  // ---- the ClusterBackend ------------------------------------------------------------------------

  async inspectCluster(): Promise<ClusterObject> {
    if (this.phase === 'inactive') return this.inactive.inspectCluster();
    return this.requireManager().settings.inspect();
  }

  async updateCluster(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void> {
    await this.requireManager().settings.update(spec, opts);
  }

  async unlockKey(): Promise<{ UnlockKey: string }> {
    if (this.phase === 'inactive') return this.inactive.unlockKey();
    return this.requireManager().settings.unlockKeyView();
  }

  /** A locked manager (autolock) opens its node key with the unlock key and rejoins its cluster. */
  unlock(keyText: string): Promise<void> {
    return this.serial(async () => {
      if (this.phase === 'inactive') return this.inactive.unlock();
      const state = this.lockedState;
      if (this.phase !== 'locked' || !state) {
        if (this.node.worker) throw unavailable(WORKER_NOT_MANAGER);
        throw conflict('swarm is not locked');
      }
      const key = parseUnlockKey(keyText);
      if (!this.files.opens(key)) throw unauthorized('swarm could not be unlocked: invalid key provided');
      this.files.setUnlockKey(key);
      this.lockedState = null;
      this.phase = 'pending';
      try {
        await this.run(state);
      } catch (err) {
        this.fail(`cannot rejoin the cluster: ${(err as Error).message}`);
        throw unavailable(`swarm component could not be started: ${(err as Error).message}`);
      }
      this.log.info('unlocked: back in the cluster', { node: state.nodeId });
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
