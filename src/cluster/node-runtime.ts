// What runs while this node is in a cluster, by role. A manager: its Manager (etcd, the endpoint),
// the overlay networks fed from its store, and `node` events. A worker: its heartbeat (Worker), the
// overlay networks it asks a manager for, and the endpoint that serves its tasks' logs. Both: the
// certificate renewal and the agent that runs the node's tasks. ClusterService (the role state
// machine in service.ts) decides when a role starts and stops; this holds what starts, in which
// order, and how it stops.
import type { Server } from 'node:https';
import { unavailable } from '../errors.ts';
import type { EventPublisher } from '../events/bus.ts';
import type { OverlayControl, OverlayHost } from '../network/overlay/contract.ts';
import type { LogsRequest } from '../types/logs.ts';
import type { Logger } from '../util/log.ts';
import { Agent, type SyncFn } from './agent/agent.ts';
import { localTaskLogs, serveLogs, workerEndpoint, type TaskLogLine } from './agent/log-forward.ts';
import type { TaskRuntime } from './agent/task-runtime.ts';
import type { CertIdentity } from './ca/ca.ts';
import type { Manager } from './manager/manager.ts';
import { ClusterNetworks } from './manager/networks.ts';
import { NodeEvents } from './manager/node-events.ts';
import type { SyncAnswer } from './manager/services-api.ts';
import { DEFAULT_LISTEN_PORT, parseAddr } from './node/addresses.ts';
import { nodeRenewer, type CertRenewer } from './node/cert-renewer.ts';
import { startEndpoint, type HeartbeatResponse } from './node/endpoint.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts } from './node/local-state.ts';
import { removeTaskContainers, vtepOf } from './node/node-helpers.ts';
import { Worker } from './node/worker.ts';
import { WorkerNetworks } from './node/worker-networks.ts';

export interface NodeRuntimeDeps {
  log: Logger;
  files: LocalStateFiles;
  /** The network layer's overlay driver (the cluster's networks and endpoints are pushed to it). */
  overlay?: () => OverlayHost | undefined;
  /** The local engine, once built, for the agent to run tasks on. */
  runtime?: () => TaskRuntime | undefined;
  events?: EventPublisher;
  /** A heartbeat answer of a worker's managers, which may change its role (ClusterService). */
  onHeartbeat: (r: HeartbeatResponse) => void;
}

export class NodeRuntime {
  private managerPart: Manager | null = null;
  private workerPart: Worker | null = null;
  private networks: ClusterNetworks | null = null;
  private workerNetworks: WorkerNetworks | null = null;
  private agent: Agent | null = null;
  /** This node's certificate renewal and trust root (cert-renewer.ts). */
  private renewer: CertRenewer | null = null;
  /** A manager's `node` events (node-events.ts). */
  private nodeEvents: NodeEvents | null = null;
  /** A worker's endpoint (only /ca and /logs: log-forward.ts). */
  private nodeEndpoint: Server | null = null;
  private stopping = false; // the daemon shuts down: no agent starts again

  constructor(private readonly deps: NodeRuntimeDeps) {}

  get manager(): Manager | null {
    return this.managerPart;
  }

  get worker(): Worker | null {
    return this.workerPart;
  }

  /** The running role's saved state (undefined outside a cluster). */
  get state(): LocalClusterState | undefined {
    return this.managerPart?.state ?? this.workerPart?.state;
  }

  /** Workers' overlay requests to this manager. */
  readonly serveOverlay = async (node: CertIdentity, op: string, body: unknown): Promise<unknown> => {
    if (!this.networks) throw unavailable('overlay networks are not ready on this manager yet');
    return this.networks.serveRemote(node.nodeId, op, body);
  };

  /** A manager's request for the logs of tasks this node runs. */
  readonly serveLogs = (node: CertIdentity, body: unknown, signal: AbortSignal) =>
    serveLogs(node, body, signal, (ids, req, sig) => this.localLogs(ids, req, sig));

  /** The certificate renewal's view for the manager's endpoint and the worker's heartbeat. */
  readonly tls = {
    info: () => this.renewer?.tlsInfo() ?? {},
    check: (ca: HeartbeatResponse['ca']) => this.renewer?.check(ca),
  };

  /** The node's TLSInfo while its certificate renewal runs (a manager's node record shows it). */
  renewalInfo(): ReturnType<CertRenewer['tlsInfo']> | undefined {
    return this.renewer?.tlsInfo();
  }

  /** A started manager becomes this node's: renewal, node events, overlay networks, then the agent. */
  async attachManager(m: Manager, certs: NodeCerts): Promise<void> {
    const st = m.state;
    this.managerPart = m;
    this.startRenewer(certs);
    await this.startNodeEvents(m);
    this.networks = await startNetworks(m, this.deps);
    this.startAgent((req) =>
      m.services.agents.sync(st.nodeId, req.reports, req.known, undefined, { since: req.since, logAddr: st.advertiseAddr }),
    );
  }

  /** A worker's parts: heartbeats (the first may fail: it keeps trying), networks, log endpoint, agent. */
  async startWorker(state: LocalClusterState, certs: NodeCerts): Promise<void> {
    const w = new Worker(state, certs, this.deps.files, this.deps.log, this.deps.onHeartbeat, this.tls);
    this.workerPart = w;
    this.startRenewer(certs);
    await w.start().catch((err: Error) => {
      // Still in the cluster: the worker keeps trying the managers it knows.
      w.lastError = `no manager answers: ${err.message}`;
      this.deps.log.warn('no manager answered the first heartbeat', { error: err.message });
    });
    const wn = new WorkerNetworks(state, certs, this.deps.overlay?.(), vtepOf(state), this.deps.log);
    this.workerNetworks = wn;
    await wn.start();
    this.nodeEndpoint = await startNodeEndpoint(state, certs, this.serveLogs, this.deps.log);
    this.startAgent((req) => w.call<SyncAnswer>('/agent/sync', { ...req, logAddr: state.advertiseAddr }));
  }

  /**
   * Stops the running role: the agent and renewal first, then a manager's node events, networks and
   * etcd, or a worker's heartbeats, networks and endpoint. `leaving`: the overlay devices go too,
   * and a worker tells its managers. Task containers keep running unless removeTasks() follows.
   */
  async stopRole(opts: { leaving: boolean }): Promise<void> {
    await this.stopAgent();
    const m = this.managerPart;
    if (m) {
      await this.stopNodeEvents();
      await this.networks?.stop(opts.leaving);
      this.networks = null;
      await m.stop();
      this.managerPart = null;
    }
    const w = this.workerPart;
    if (w) {
      await this.workerNetworks?.stop(opts.leaving);
      this.workerNetworks = null;
      if (opts.leaving) await w.announceLeave();
      w.stop();
      this.workerPart = null;
    }
    this.stopNodeEndpoint();
  }

  /** Daemon shutdown, first step: the agent ends for good, so no task container starts meanwhile. */
  async stopTasks(): Promise<void> {
    this.stopping = true;
    await this.stopAgent();
  }

  /** As dockerd: a node that leaves removes the containers of its tasks. */
  async removeTasks(): Promise<void> {
    await removeTaskContainers(this.deps.runtime?.(), this.deps.log);
  }

  /** Overlay networks' cluster side (undefined while the node is not active). */
  overlayControl(active: boolean): OverlayControl | undefined {
    if (!active) return undefined;
    return (this.managerPart ? this.networks : this.workerNetworks) ?? undefined;
  }

  /** A manager's overlay networks (ingress is made through them at init). */
  clusterNetworks(): ClusterNetworks | null {
    return this.networks;
  }

  /** A role change runs the node again: a worker's endpoint would hold the listen address a manager needs. */
  stopNodeEndpoint(): void {
    const s = this.nodeEndpoint;
    this.nodeEndpoint = null;
    s?.close();
    s?.closeAllConnections();
  }

  /** The log lines of tasks whose containers run here. */
  async localLogs(taskIds: string[], req: LogsRequest, signal: AbortSignal): Promise<AsyncIterable<TaskLogLine>> {
    const rt = this.deps.runtime?.();
    const agent = this.agent;
    if (!rt || !agent) throw unavailable('the local engine is not ready to read task logs');
    return localTaskLogs(taskIds, (id) => agent.containerOf(id), rt, req, signal);
  }

  private async startNodeEvents(m: Manager): Promise<void> {
    await this.stopNodeEvents(); // a forced new cluster keeps the node: its old watch ends
    if (!this.deps.events) return;
    const ev = new NodeEvents(m.store, this.deps.events, this.deps.log);
    try {
      await ev.start();
      this.nodeEvents = ev;
    } catch (err) {
      this.deps.log.warn('node events could not start', { error: (err as Error).message });
    }
  }

  private async stopNodeEvents(): Promise<void> {
    const ev = this.nodeEvents;
    this.nodeEvents = null;
    await ev?.stop();
  }

  /** Renews this node's certificate through its managers and follows root rotations (cert-renewer.ts). */
  private startRenewer(certs: NodeCerts): void {
    this.renewer?.stop();
    const node = { manager: () => this.managerPart, worker: () => this.workerPart, endpoint: () => this.nodeEndpoint };
    this.renewer = nodeRenewer(certs, this.deps.files, this.deps.log, node);
  }

  private startAgent(sync: SyncFn): void {
    if (this.stopping) return; // the daemon shuts down: its containers are stopping for good
    void this.agent?.stop(); // a replaced agent: its last round may finish on its own
    this.agent = new Agent(sync, this.deps.runtime ?? (() => undefined), this.deps.log);
    this.agent.start();
  }

  /** Also ends the certificate renewal: every path that stops the agent stops the node's runtime. */
  private async stopAgent(): Promise<void> {
    this.renewer?.stop();
    this.renewer = null;
    const a = this.agent;
    this.agent = null;
    await a?.stop();
  }
}

/** A manager's overlay networks: the store watched, this node's driver fed. A failure is logged. */
async function startNetworks(m: Manager, deps: NodeRuntimeDeps): Promise<ClusterNetworks | null> {
  const st = m.state;
  const n = new ClusterNetworks({
    store: m.store,
    log: deps.log,
    host: deps.overlay?.(),
    nodeId: st.nodeId,
    vtep: vtepOf(st),
    cluster: async () => (await m.settings.get()).value,
  });
  try {
    await n.start();
    return n;
  } catch (err) {
    deps.log.warn('overlay networks could not start', { error: (err as Error).message });
    return null;
  }
}

/** A worker serves the managers' log requests at its listen address (it has no manager endpoint). */
async function startNodeEndpoint(
  state: LocalClusterState,
  certs: NodeCerts,
  logs: NodeRuntime['serveLogs'],
  log: Logger,
): Promise<Server | null> {
  try {
    return await startEndpoint(
      parseAddr(state.listenAddr, DEFAULT_LISTEN_PORT, 'listen address'),
      certs,
      state.clusterId,
      workerEndpoint(certs.caPem, logs),
      log,
    );
  } catch (err) {
    log.warn('cannot serve the logs of this node’s tasks to the managers', { error: (err as Error).message });
    return null;
  }
}
