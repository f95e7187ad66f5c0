// The cluster backend of the /swarm, /nodes, /services, /tasks, /secrets and /configs routes, and
// the node's cluster state for /info and /_ping. A node is inactive (answers as inactive.ts), a
// manager (runs etcd: manager.ts) or a worker (heartbeats to managers: worker.ts); its state is
// saved under <data-root>/cluster and restored when the daemon starts. Every node in a cluster runs
// an agent (agent.ts) that runs its tasks on the local engine. Secrets and configs: secrets-api.ts.
import type { GenericResource } from '../config/generic-resources.ts';
import { arch, cpus, hostname, totalmem } from 'node:os';
import { invalidParameter, notImplemented, unavailable } from '../errors.ts';
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
import { certificateIps, chooseAdvertise, DEFAULT_LISTEN_PORT, formatHostPort, parseAddr } from './addresses.ts';
import { createRootCa, identityOf, issueNodeCert, newKeyPair, signedBy, tlsInfoOf } from './ca.ts';
import { callManager, type JoinRequest, type JoinResponse } from './endpoint.ts';
import { peerUrl } from './etcd-process.ts';
import { newId } from './ids.ts';
import { InactiveCluster, NOT_A_MANAGER, NOT_IN_A_CLUSTER } from './inactive.ts';
import { LocalStateFiles, type LocalClusterState } from './local-state.ts';
import { etcdPorts, Manager, newNodeRecord } from './manager.ts';
import type { NodeRecord } from './nodes.ts';
import { checkSpec, withDefaults, type ClusterRecord } from './swarm-object.ts';
import { caDigest, newJoinToken, tokenMatchesCa } from './tokens.ts';
import { Worker } from './worker.ts';
import type { EventPublisher } from '../events/bus.ts';
import { Agent, type SyncFn } from './agent.ts';
import type { SyncAnswer } from './services-api.ts';
import { serviceLogs } from './service-logs.ts';
import type { TaskRuntime } from './task-runtime.ts';
import type { TaskRecord } from './tasks.ts';
import { newDataKey } from './secret-crypto.ts';
import type { FileObjectsApi } from './secrets-api.ts';
import { checkInitNetworking } from './init-request.ts';
import { ClusterNetworks } from './networks.ts';
import { WorkerNetworks } from './worker-networks.ts';
import type { CertIdentity } from './ca.ts';
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
  /** --node-generic-resource, advertised in the node's Description.Resources. */
  genericResources?: () => GenericResource[];
  /** The local engine, once built, for the agent to run tasks on. */
  runtime?: () => TaskRuntime | undefined;
  events?: EventPublisher;
}

type Phase = 'inactive' | 'pending' | 'active' | 'error';

export class ClusterService {
  private phase: Phase = 'inactive';
  private manager: Manager | null = null;
  private worker: Worker | null = null;
  private networks: ClusterNetworks | null = null;
  private workerNetworks: WorkerNetworks | null = null;
  /** Workers' overlay requests to this manager. */
  private readonly serveOverlay = async (node: CertIdentity, op: string, body: unknown): Promise<unknown> => {
    if (!this.networks) throw unavailable('overlay networks are not ready on this manager yet');
    return this.networks.serveRemote(node.nodeId, op, body);
  };
  private agent: Agent | null = null;
  private error = '';
  private busy: Promise<unknown> = Promise.resolve();
  private readonly files: LocalStateFiles;
  private readonly log: Logger;
  private readonly inactive = new InactiveCluster();

  constructor(private readonly deps: ClusterServiceDeps) {
    this.files = new LocalStateFiles(deps.dataRoot);
    this.log = deps.log.child({ module: 'cluster' });
  }

  /** One lifecycle change at a time (init, join, leave, restore, shutdown). */
  private serial<T>(fn: () => Promise<T>): Promise<T> {
    const run = this.busy.then(fn, fn);
    // The caller gets the failure through `run`; the queue only needs to move on.
    this.busy = run.catch(() => undefined);
    return run;
  }

  private describe(caPem: string): NodeRecord['Description'] {
    const generic = this.deps.genericResources?.() ?? [];
    const labels: Record<string, string> = {};
    for (const l of this.deps.engineLabels()) {
      const i = l.indexOf('=');
      labels[i < 0 ? l : l.slice(0, i)] = i < 0 ? '' : l.slice(i + 1);
    }
    return {
      Hostname: hostname(),
      Platform: { Architecture: arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'aarch64' : arch(), OS: 'linux' },
      Resources: { NanoCPUs: cpus().length * 1e9, MemoryBytes: totalmem(), ...(generic.length ? { GenericResources: generic } : {}) },
      Engine: { EngineVersion: this.deps.engineVersion, Labels: labels, Plugins: [] },
      TLSInfo: tlsInfoOf(caPem),
    };
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
      this.phase = 'pending';
      try {
        await this.run(state);
        this.log.info('back in the cluster', { node: state.nodeId, role: state.role });
      } catch (err) {
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
    if (state.role === 'manager') {
      const m = await Manager.start(
        {
          log: this.deps.log,
          files: this.files,
          describe: () => this.describe(certs.caPem),
          overlay: this.serveOverlay,
          events: this.deps.events,
        },
        state,
        certs,
        promote ? { promote } : { restart: true },
      );
      try {
        await m.serve();
      } catch (err) {
        await m.stop();
        throw err;
      }
      this.manager = m;
      await this.startNetworks(m);
      this.startAgent((req) => m.services.sync(state.nodeId, req.reports, req.known, undefined, req.since));
    } else {
      const w = new Worker(state, certs, this.files, this.log);
      this.worker = w;
      await w.start().catch((err: Error) => {
        // Still in the cluster: the worker keeps trying the managers it knows.
        w.lastError = `no manager answers: ${err.message}`;
        this.log.warn('no manager answered the first heartbeat', { error: err.message });
      });
      const wn = new WorkerNetworks(state, certs, this.deps.overlay?.(), vtepOf(state), this.log);
      this.workerNetworks = wn;
      await wn.start();
      this.startAgent((req) => w.call<SyncAnswer>('/agent/sync', req));
    }
    this.phase = 'active';
    this.error = '';
  }

  /** A manager's overlay networks: the store watched, this node's driver fed. A failure is logged. */
  private async startNetworks(m: Manager): Promise<void> {
    const host = this.deps.overlay?.();
    const st = m.state;
    const n = new ClusterNetworks({
      store: m.store,
      log: this.log,
      host,
      nodeId: st.nodeId,
      vtep: vtepOf(st),
      cluster: async () => (await m.cluster()).value,
    });
    try {
      await n.start();
      this.networks = n;
    } catch (err) {
      this.log.warn('overlay networks could not start', { error: (err as Error).message });
    }
  }

  /** Overlay networks' cluster side (managers only; undefined elsewhere). */
  overlayControl(): OverlayControl | undefined {
    if (this.phase !== 'active') return undefined;
    return (this.manager ? this.networks : this.workerNetworks) ?? undefined;
  }

  private startAgent(sync: SyncFn): void {
    void this.agent?.stop(); // a replaced agent: its last round may finish on its own
    this.agent = new Agent(sync, this.deps.runtime ?? (() => undefined), this.log);
    this.agent.start();
  }

  private async removeTaskContainers(): Promise<void> {
    const rt = this.deps.runtime?.();
    if (!rt) return;
    try {
      for (const c of await rt.list()) {
        // One container that cannot go must not keep the others.
        await rt
          .remove(c.id)
          .then(() => rt.removeFiles(c.taskId))
          .catch((err: Error) =>
            this.log.warn('cannot remove a task container of a node leaving the cluster', { task: c.taskId, error: err.message }),
          );
      }
    } catch (err) {
      this.log.warn('cannot list the task containers of a node leaving the cluster', { error: (err as Error).message });
    }
  }

  private async stopAgent(): Promise<void> {
    const a = this.agent;
    this.agent = null;
    await a?.stop();
  }

  // ---- /_ping and /info --------------------------------------------------------------------------

  /** The Swarm header of /_ping. */
  pingState(): string {
    if (this.phase === 'active') return this.manager ? 'active/manager' : 'active/worker';
    return this.phase;
  }

  /** /info's Swarm section. */
  async info(): Promise<ClusterObject> {
    const state = this.manager?.state ?? this.worker?.state;
    if (this.phase === 'inactive' || !state) {
      return { NodeID: '', NodeAddr: '', LocalNodeState: this.phase, ControlAvailable: false, Error: this.error, RemoteManagers: null };
    }
    const base: ClusterObject = {
      NodeID: state.nodeId,
      NodeAddr: parseAddr(state.advertiseAddr, 0, 'advertise address').host,
      LocalNodeState: this.phase,
      ControlAvailable: !!this.manager,
      Error: this.worker?.lastError ?? '',
      RemoteManagers: state.managers,
    };
    if (!this.manager) return base;
    try {
      return { ...base, ...(await this.manager.info()) };
    } catch (err) {
      return { ...base, Error: (err as Error).message };
    }
  }

  private requireManager(): Manager {
    if (this.manager && this.phase === 'active') return this.manager;
    if (this.worker) throw unavailable(WORKER_NOT_MANAGER);
    if (this.phase === 'pending') throw unavailable('This node is still starting its cluster membership; try again shortly.');
    if (this.phase === 'error') throw unavailable(this.error);
    throw unavailable(NOT_A_MANAGER);
  }

  // ---- lifecycle -----------------------------------------------------------------------------------

  init(req: SwarmInitRequest): Promise<string> {
    return this.serial(async () => {
      if (this.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
      const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
      const adv = chooseAdvertise(listen, req.AdvertiseAddr);
      const spec = withDefaults(req.Spec);
      checkSpec(spec);
      const net = checkInitNetworking(req);
      const availability = checkAvailability(req.Availability || 'active');
      const nodeId = newId();
      const clusterId = newId();
      const ca = await createRootCa();
      const keys = newKeyPair();
      const certPem = await issueNodeCert(ca, keys.publicKeyPem, {
        nodeId,
        role: 'manager',
        clusterId,
        ips: certificateIps(adv.host, listen.host),
      });
      const advertiseAddr = formatHostPort(adv);
      const state: LocalClusterState = {
        nodeId,
        clusterId,
        role: 'manager',
        listenAddr: formatHostPort(listen),
        advertiseAddr,
        dataPathAddr: req.DataPathAddr ?? '',
        managers: [{ NodeID: nodeId, Addr: advertiseAddr }],
        etcd: { initialCluster: `${nodeId}=${peerUrl(adv.host, etcdPorts(adv.port).peer)}`, initialState: 'new', clusterToken: clusterId },
      };
      const now = new Date().toISOString();
      const rec: ClusterRecord = {
        ID: clusterId,
        CreatedAt: now,
        UpdatedAt: now,
        Spec: spec,
        RootRotationInProgress: false,
        ...net,
        JoinTokens: { Worker: newJoinToken(ca.certPem), Manager: newJoinToken(ca.certPem) },
        ca,
        dataKey: newDataKey(),
      };
      this.files.remove(); // what a failed attempt may have left
      this.files.writeCerts({ caPem: ca.certPem, certPem, keyPem: keys.keyPem });
      this.files.write(state);
      let m: Manager | null = null;
      try {
        m = await Manager.start(
          {
            log: this.deps.log,
            files: this.files,
            describe: () => this.describe(ca.certPem),
            overlay: this.serveOverlay,
            events: this.deps.events,
          },
          state,
          {
            caPem: ca.certPem,
            certPem,
            keyPem: keys.keyPem,
          },
        );
        await m.bootstrap(rec, newNodeRecord(nodeId, 'manager', advertiseAddr, this.describe(ca.certPem), availability));
        await m.serve();
      } catch (err) {
        await m?.stop().catch((e: Error) => this.log.warn('stopping the half-made cluster failed', { error: e.message }));
        this.files.remove();
        throw err;
      }
      this.manager = m;
      const mgr = m;
      this.startAgent((req) => mgr.services.sync(nodeId, req.reports, req.known, undefined, req.since));
      this.phase = 'active';
      this.error = '';
      await this.startNetworks(m);
      // dockerd makes the ingress network at init (its routing mesh is not built here).
      await this.networks
        ?.create({ Name: 'ingress', Driver: 'overlay', Ingress: true })
        .catch((err: Error) => this.log.warn('creating the ingress network failed', { error: err.message }));
      this.log.info('cluster initialised', { node: nodeId, cluster: clusterId, addr: advertiseAddr });
      return nodeId;
    });
  }

  join(req: SwarmJoinRequest): Promise<void> {
    return this.serial(async () => {
      if (this.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
      if (!req.RemoteAddrs?.length) throw invalidParameter('at least 1 RemoteAddr is required to join');
      const token = req.JoinToken ?? '';
      const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
      const adv = chooseAdvertise(listen, req.AdvertiseAddr);
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
        description: this.describe(caPem),
        ...(req.Availability ? { availability: checkAvailability(req.Availability) } : {}),
      };
      const res = await callManager<JoinResponse>(remote, 'POST', '/join', body, { caPem, timeoutMs: 60_000 });
      if (!signedBy(res.certPem, caPem) || identityOf(res.certPem).nodeId !== res.nodeId)
        throw unavailable('the manager answered with a certificate of another CA or node');
      const state: LocalClusterState = {
        nodeId: res.nodeId,
        clusterId: res.clusterId,
        role: res.role,
        listenAddr: formatHostPort(listen),
        advertiseAddr: formatHostPort(adv),
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
      const promote = async () => {
        const deadline = Date.now() + 60_000;
        for (;;) {
          try {
            return await callManager<void>(remote, 'POST', '/promote', {}, { caPem, certs });
          } catch (err) {
            if (Date.now() > deadline) throw err;
            this.log.debug('etcd promotion not yet possible', { error: (err as Error).message });
            await new Promise((r) => setTimeout(r, 500));
          }
        }
      };
      try {
        await this.run(state, res.role === 'manager' ? promote : undefined);
      } catch (err) {
        this.files.remove();
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
      if (this.manager) {
        await this.manager.leaveCluster(force); // refuses without force, as dockerd
        await this.networks?.stop(true);
        this.networks = null;
        await this.manager.stop();
      } else if (this.worker) {
        await this.workerNetworks?.stop(true);
        this.workerNetworks = null;
        await this.worker.announceLeave();
        this.worker.stop();
      }
      // As dockerd: a node that leaves removes the containers of its tasks.
      await this.stopAgent();
      await this.removeTaskContainers();
      this.manager = null;
      this.worker = null;
      this.files.remove();
      this.phase = 'inactive';
      this.error = '';
      this.log.info('left the cluster');
    });
  }

  /** Daemon shutdown: stops etcd, the endpoint and heartbeats; the node stays in its cluster. */
  shutdown(): Promise<void> {
    return this.serial(async () => {
      await this.stopAgent();
      this.worker?.stop();
      await this.workerNetworks?.stop(false);
      this.workerNetworks = null;
      await this.networks?.stop(false);
      this.networks = null;
      await this.manager?.stop();
    });
  }

  // ---- the ClusterBackend ------------------------------------------------------------------------

  async inspectCluster(): Promise<ClusterObject> {
    if (this.phase === 'inactive') return this.inactive.inspectCluster();
    return this.requireManager().inspectCluster();
  }

  async updateCluster(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void> {
    const m = this.requireManager();
    if (opts.rotateManagerUnlockKey) throw notImplemented('autolock and its unlock key are not built yet in this engine');
    await m.updateCluster(spec, opts);
  }

  async unlockKey(): Promise<{ UnlockKey: string }> {
    this.requireManager();
    return { UnlockKey: '' }; // autolock is not built, so no key is ever set (the CLI says "no unlock key is set")
  }

  async unlock(): Promise<void> {
    if (this.phase === 'inactive') return this.inactive.unlock();
    throw unavailable('Swarm is not locked.');
  }

  async list(kind: ClusterObjectKind, filters: Map<string, string[]>, opts: { status?: boolean } = {}): Promise<ClusterObject[]> {
    const m = this.requireManager();
    if (kind === 'nodes') return m.listNodes(filters);
    if (kind === 'services') return m.services.list(filters, !!opts.status);
    if (kind === 'tasks') return m.services.listTasks(filters, await m.nodesList());
    return fileObjects(m, kind).list(filters);
  }

  async inspect(kind: ClusterObjectKind, id: string, opts: { insertDefaults?: boolean } = {}): Promise<ClusterObject> {
    const m = this.requireManager();
    if (kind === 'nodes') return m.inspectNode(id);
    if (kind === 'services') return m.services.inspect(id, !!opts.insertDefaults);
    if (kind === 'tasks') return m.services.inspectTask(id);
    return fileObjects(m, kind).inspect(id);
  }

  /** X-Registry-Auth is accepted; task nodes use the images they hold (pulling on task nodes is not built). */
  async create(kind: CreatableKind, spec: ClusterObject = {}): Promise<{ ID: string; Warnings?: string[] }> {
    const m = this.requireManager();
    if (kind !== 'services') return fileObjects(m, kind).create(spec);
    const r = await m.services.create(spec);
    m.kick();
    return r;
  }

  async update(kind: MutableKind, id: string, spec: ClusterObject, opts: ObjectUpdateOptions): Promise<{ Warnings?: string[] }> {
    const m = this.requireManager();
    if (kind === 'services') {
      const r = await m.services.update(id, spec, opts);
      m.kick();
      return r;
    }
    if (kind !== 'nodes') {
      await fileObjects(m, kind).update(id, spec, opts.version);
      return {};
    }
    await m.updateNode(id, spec, opts.version);
    m.kick();
    return {};
  }

  async remove(kind: MutableKind, id: string, opts: { force: boolean }): Promise<void> {
    const m = this.requireManager();
    if (kind === 'services') return m.services.remove(id);
    if (kind !== 'nodes') return fileObjects(m, kind).remove(id);
    await m.removeNode(id, opts.force);
  }

  /** Logs of the tasks that run on this node (tasks on other nodes: 501, see service-logs.ts). */
  async logs(kind: 'services' | 'tasks', id: string, opts: ClusterLogOptions): Promise<AsyncIterable<Buffer>> {
    const m = this.requireManager();
    const tasks = kind === 'services' ? await m.services.serviceTasks(id) : [await m.services.findTask(id)];
    const rt = this.deps.runtime?.();
    const agent = this.agent;
    if (!rt || !agent) throw unavailable('the local engine is not ready to read task logs');
    const self = m.state.nodeId;
    const containerOf = Object.assign((t: TaskRecord) => (t.NodeID === self ? agent.containerOf(t.ID) : undefined), {
      isLocal: (t: TaskRecord) => t.NodeID === self,
    });
    return serviceLogs(tasks, containerOf, rt, opts);
  }
}

function fileObjects(m: Manager, kind: ClusterObjectKind): FileObjectsApi {
  if (kind === 'secrets') return m.secrets;
  if (kind === 'configs') return m.configs;
  throw invalidParameter(`no such object kind ${kind}`);
}

/** The node's VXLAN tunnel end: its data-path address, else its advertise address. */
function vtepOf(st: LocalClusterState): string {
  return st.dataPathAddr || parseAddr(st.advertiseAddr, 0, 'advertise address').host;
}

function checkAvailability(a: string): string {
  if (a !== 'active' && a !== 'pause' && a !== 'drain')
    throw invalidParameter(`invalid Availability ${JSON.stringify(a)}: must be "active", "pause" or "drain"`);
  return a;
}
