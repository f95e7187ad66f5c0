// A manager's runtime: its etcd member, the store client, the endpoint other nodes call, its own
// heartbeat, the orchestrator; built from its parts: the cluster record (cluster-settings.ts), the
// node records (node-registry.ts), other nodes' joins and heartbeats (node-admission.ts), its own
// beat (manager-beat.ts), services and tasks, secrets, configs and volumes.
// Created by `init` (a new cluster), `joined` (after a join as manager) or `reopen` (restart).
import type { Server } from 'node:https';
import { unavailable } from '../../errors.ts';
import { openClusterKeys } from '../ca/autolock.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { Logger } from '../../util/log.ts';
import { parseAddr } from '../node/addresses.ts';
import { identityOf, type CertIdentity } from '../ca/ca.ts';
import { startEndpoint, type EndpointHandler, type RenewResponse } from '../node/endpoint.ts';
import { EtcdMember, etcdPorts } from '../store/etcd-process.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts, RemoteManager } from '../node/local-state.ts';
import type { NodeRecord } from './nodes.ts';
import { ClusterStore } from '../store/store.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { LOCK_TTL_S, ORCHESTRATOR_LOCK, OrchestratorLoop, type LoopSource } from './orchestrator-loop.ts';
import { RecordMode } from '../store/record-mode.ts';
import { clusterDataKey, FileObjectsApi, fileObjectHooks } from './secrets-api.ts';
import { ClusterVolumesApi } from './volumes-api.ts';
import { ServicesApi } from './services-api.ts';
import { endpointHandler } from './control/endpoint-handler.ts';
import { ClusterSettings } from './control/cluster-settings.ts';
import { NodeRegistry } from './control/node-registry.ts';
import { NodeAdmission } from './control/node-admission.ts';
import { ManagerBeat, type BeatChecks } from './control/manager-beat.ts';

/** Where the etcd ports are, for the bench's direct store access. */
export { etcdPorts } from '../store/etcd-process.ts';

export interface ManagerEnv extends BeatChecks {
  log: Logger;
  files: LocalStateFiles;
  /** This node's Description (hostname, platform, resources, engine). */
  describe(): NodeRecord['Description'];
  /** Workers' overlay requests (cluster/networks.ts serveRemote); absent: 404. */
  overlay?: (node: CertIdentity, op: string, body: unknown) => Promise<unknown>;
  events?: EventPublisher;
  /** Fetches the unlock key of `kekId` from one of `managers` and keeps it (a manager just joined). */
  holdKey?: (kekId: string, managers: RemoteManager[]) => Promise<void>;
  /** Another manager's request for the logs of tasks this node runs (log-forward.ts). */
  logs?: (node: CertIdentity, body: unknown, signal: AbortSignal) => Promise<AsyncIterable<Buffer>>;
}

export class Manager {
  private server: Server | null = null;
  private readonly log: Logger;
  /** The cluster record: its view, `swarm update`, the unlock key. */
  readonly settings: ClusterSettings;
  /** The node records: list, inspect, update, remove. */
  readonly nodes: NodeRegistry;
  /** Other nodes' joins, heartbeats, renewals, promotions and leaves (the endpoint's calls). */
  private readonly admission: NodeAdmission;
  private readonly beat: ManagerBeat;
  /** Services and tasks on the store. */
  readonly services: ServicesApi;
  readonly secrets: FileObjectsApi;
  readonly configs: FileObjectsApi;
  readonly volumes: ClusterVolumesApi;
  private readonly loop: OrchestratorLoop;
  /** Records sealed at rest while autolocked (record-mode.ts). */
  private readonly records: RecordMode;

  private constructor(
    private readonly env: ManagerEnv,
    readonly state: LocalClusterState,
    private readonly certs: NodeCerts,
    private readonly member: EtcdMember,
    readonly store: ClusterStore,
  ) {
    const log = (this.log = env.log.child({ module: 'cluster' }));
    const files = env.files;
    this.records = new RecordMode(
      store,
      () => files.kek,
      log,
      async (id) => env.holdKey?.(id, this.otherManagers()),
    );
    this.nodes = new NodeRegistry(store, state.nodeId, log);
    this.settings = new ClusterSettings(store, files, this.records, (rec) => this.beat.caChanged(rec), log);
    const settings = this.settings;
    const nodes = this.nodes;
    this.beat = new ManagerBeat({
      store,
      nodes,
      settings,
      records: this.records,
      files,
      checks: env,
      selfId: state.nodeId,
      managers: state.managers,
      log,
    });
    const key = clusterDataKey(store, (rec) => openClusterKeys(rec, files.kek).dataKey);
    const services = () => this.services.services();
    this.secrets = new FileObjectsApi('secrets', store, env.events, key, services);
    this.configs = new FileObjectsApi('configs', store, env.events, key, services);
    this.volumes = new ClusterVolumesApi(store);
    this.services = new ServicesApi(store, env.events, fileObjectHooks(this.secrets, this.configs), log);
    const cache = this.services.cache;
    this.admission = new NodeAdmission({
      store,
      nodes,
      settings,
      member,
      certs,
      clusterId: state.clusterId,
      etcdToken: state.etcd!.clusterToken,
      files,
      beat: this.beat,
      cache: () => (cache.ready ? cache : undefined),
      log,
    });
    this.loop = new OrchestratorLoop(loopSource(store, this.services, nodes, settings, state.nodeId), log);
  }

  /** A service changed: the orchestrator plans at once instead of at its next round. */
  kick(): void {
    this.loop.kick();
  }

  /** Starts etcd from the saved state, connects, listens, heartbeats. */
  /** `restart`: the member comes back among its peers and may have to wait for a quorum. */
  static async start(
    env: ManagerEnv,
    state: LocalClusterState,
    certs: NodeCerts,
    opts: { forceNewCluster?: boolean; promote?: () => Promise<void>; restart?: boolean } = {},
  ): Promise<Manager> {
    const member = await startMember(env, state, opts);
    let store: ClusterStore | null = null;
    try {
      if (opts.promote) await untilVoter(member, opts.promote);
      store = await ClusterStore.open([member.endpoint], certs);
      store.seal.hold(); // no record is written before the cluster record says sealed or not (serve)
      const m = new Manager(env, state, certs, member, store);
      return m;
    } catch (err) {
      store?.close();
      await member.stop();
      throw err;
    }
  }

  /** The endpoint and the heartbeat, once the store holds this node. */
  async serve(): Promise<void> {
    try {
      const cluster = await this.settings.get();
      // Before anything reads or writes records: sealed or not, and the data key (fetched with the
      // unlock key from another manager if this one just joined an autolocked cluster).
      await this.records.apply(cluster.value, { fetchKey: true });
      this.beat.usePeriodOf(cluster.value);
    } catch (err) {
      // A restarted manager without a quorum yet: serve anyway; the store answers once it is back.
      this.log.warn('cannot read the cluster object yet; using the default heartbeat period', { error: (err as Error).message });
    }
    // Independent steps together (each waits on the store or a socket; init waits on them all).
    const [server] = await Promise.all([
      startEndpoint(parseAddr(this.state.listenAddr, 0, 'listen address'), this.certs, this.state.clusterId, this.handler(), this.log),
      this.beat.beat(),
      this.services
        .watch()
        .catch((err: Error) => this.log.warn('cannot watch services and tasks; agents poll instead', { error: err.message })),
    ]);
    this.server = server;
    // Autolock switched on another manager: this one follows at once (the heartbeat also checks).
    await this.store
      .watch(
        'cluster',
        (key) =>
          key === 'cluster' &&
          void this.keysChanged().catch((e: Error) => this.log.debug('following a cluster key change failed', { error: e.message })),
      )
      .catch((err: Error) => this.log.warn('cannot watch the cluster object', { error: err.message }));
    this.beat.start();
    this.services.onChange(() => this.loop.kick());
    this.loop.start();
  }

  private handler(): EndpointHandler {
    const { admission, settings, services, env } = this;
    return endpointHandler({ caPem: () => this.certs.caPem, admission, settings, services, overlay: env.overlay, logs: env.logs });
  }

  /** The other managers as last known (to ask when this member's store does not answer). */
  otherManagers(): RemoteManager[] {
    return this.beat.otherManagers();
  }

  /** The unlock key this node holds changed, or the cluster record did: the records' mode follows. */
  async keysChanged(): Promise<void> {
    await this.records.apply((await this.settings.get()).value);
  }

  /** /info's Swarm section. */
  async info(): Promise<ClusterObject> {
    const [nodes, cluster] = await Promise.all([this.nodes.records(), this.settings.inspect(false)]);
    const managers = nodes.filter((s) => s.value.Spec.Role === 'manager');
    return {
      Nodes: nodes.length,
      Managers: managers.length,
      Cluster: cluster,
      RemoteManagers: managers.filter((s) => s.value.ManagerAddr).map((s) => ({ NodeID: s.value.ID, Addr: s.value.ManagerAddr })),
    };
  }

  /** A certificate renewal of this node itself, signed in process (cert-renewer.ts). */
  renew(node: CertIdentity, certPem: string, body: { publicKeyPem?: unknown }): Promise<RenewResponse> {
    return this.admission.renew(node, certPem, body);
  }

  /** The endpoint's TLS after this node's certificate or trust root changed; the change reported soon. */
  refreshTls(): void {
    this.server?.setSecureContext({ cert: this.certs.certPem, key: this.certs.keyPem, ca: this.certs.caPem });
    this.beat.soon();
  }

  // ---- stopping ------------------------------------------------------------------------------

  async stop(): Promise<void> {
    this.loop.stop();
    // Another manager orchestrates at once rather than after the lock's lease runs out.
    await Promise.race([this.store.leases.releaseLock(ORCHESTRATOR_LOCK), new Promise((r) => setTimeout(r, 1000).unref())]);
    await this.services.close();
    this.beat.stop();
    if (this.server) {
      this.server.closeAllConnections();
      await new Promise<void>((r) => this.server!.close(() => r()));
      this.server = null;
    }
    this.store.close();
    await this.member.stop();
  }

  /** The node's identity from its certificate (checked at start). */
  identity(): CertIdentity {
    return identityOf(this.certs.certPem);
  }
}

/** This manager's etcd member, started from the saved state (learner, restart or forced new cluster). */
async function startMember(
  env: ManagerEnv,
  state: LocalClusterState,
  opts: { forceNewCluster?: boolean; promote?: () => Promise<void>; restart?: boolean },
): Promise<EtcdMember> {
  const adv = parseAddr(state.advertiseAddr, 0, 'advertise address');
  const ports = etcdPorts(adv.port);
  const etcd = state.etcd!;
  const member = new EtcdMember({
    name: state.nodeId,
    dataDir: env.files.etcdDir,
    host: adv.host,
    clientPort: ports.client,
    peerPort: ports.peer,
    tls: env.files.tlsFiles,
    initialCluster: etcd.initialCluster,
    initialState: etcd.initialState,
    clusterToken: etcd.clusterToken,
    ...(opts.forceNewCluster ? { forceNewCluster: true } : {}),
    ...(opts.promote || opts.restart ? { waitFor: 'serving' as const } : {}),
    // The store client's modules load (~0.2 s of this thread) while etcd starts, not after.
    onSpawned: () => ClusterStore.preload(),
    log: env.log,
  });
  await member.start();
  return member;
}

/** A joining manager starts as a learner: it becomes a voter once it has caught up. */
async function untilVoter(member: EtcdMember, promote: () => Promise<void>): Promise<void> {
  await promote();
  const deadline = Date.now() + 60_000;
  while (!(await member.healthy())) {
    if (Date.now() > deadline) throw unavailable('the new etcd member did not become healthy within 60 s of its promotion');
    await new Promise((r) => setTimeout(r, 200));
  }
}

/** What the orchestrator's loop reads: the lock (taken while this member leads), nodes, history limit. */
function loopSource(store: ClusterStore, api: ServicesApi, nodes: NodeRegistry, settings: ClusterSettings, selfId: string): LoopSource {
  return {
    store,
    api,
    lock: async () => {
      const s = await store.membership.leader();
      return store.leases.holdLock(ORCHESTRATOR_LOCK, LOCK_TTL_S, { node: selfId }, s.leader === s.member);
    },
    nodes: async () => {
      const [all, live] = await Promise.all([nodes.records(), nodes.liveness()]);
      return all.map((s) => ({ rec: s.value, up: live(s.value).up }));
    },
    historyLimit: async () => {
      const o = (await settings.get()).value.Spec.Orchestration as { TaskHistoryRetentionLimit?: number } | undefined;
      return o?.TaskHistoryRetentionLimit ?? 5;
    },
  };
}
