// A manager's runtime: its etcd member, the store client, the endpoint other nodes call, its own
// heartbeat; and what a manager answers: the cluster object, nodes, joins of other nodes.
// Created by `init` (a new cluster), `joined` (after a join as manager) or `reopen` (restart).
import type { Server } from 'node:https';
import { forbidden, invalidParameter, notFound, notImplemented, unavailable } from '../../errors.ts';
import { formatUnlockKey, kekOf, newUnlockKey, openClusterKeys, sealClusterKeys } from '../ca/autolock.ts';
import { newDataKey } from '../ca/secret-crypto.ts';
import type { ClusterObject, SwarmUpdateOptions } from '../../types/cluster.ts';
import type { Logger } from '../../util/log.ts';
import { certificateIps, formatHostPort, parseAddr } from '../node/addresses.ts';
import { certIps, identityOf, issueNodeCert, reissueForRole, tlsInfoOf, type CertIdentity, type NodeRole } from '../ca/ca.ts';
import { caUpdate, desiredIssuerKey, finishRotation, nodeCertLifetimeMs, signerOf, storedSpec } from '../ca/ca-rotation.ts';
import {
  startEndpoint,
  type HeartbeatRequest,
  type HeartbeatResponse,
  type JoinRequest,
  type JoinResponse,
  type RenewResponse,
} from '../node/endpoint.ts';
import { EtcdMember, peerUrl } from '../store/etcd-process.ts';
import { newId } from '../ids.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts, RemoteManager } from '../node/local-state.ts';
import { checkNodeSpec, checkRemovable, filterNodes, findNode, nodeView, type NodeRecord } from './nodes.ts';
import { ClusterStore, type Stored } from '../store/store.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { LOCK_TTL_S, ORCHESTRATOR_LOCK, OrchestratorLoop } from './orchestrator-loop.ts';
import { RecordMode } from '../store/record-mode.ts';
import { clusterDataKey, FileObjectsApi, fileObjectHooks } from './secrets-api.ts';
import { ClusterVolumesApi } from './volumes-api.ts';
import { ServicesApi, type AgentSyncRequest, type SyncAnswer } from './services-api.ts';
import { checkSpec, clusterView, HEARTBEAT_PERIOD_NS, withDefaults, type ClusterRecord } from '../ca/swarm-object.ts';
import { newJoinToken, parseJoinToken, sameToken } from '../ca/tokens.ts';

export interface ManagerEnv {
  log: Logger;
  files: LocalStateFiles;
  /** This node's Description (hostname, platform, resources, engine). */
  describe(): NodeRecord['Description'];
  /** Workers' overlay requests (cluster/networks.ts serveRemote); absent: 404. */
  overlay?: (node: CertIdentity, op: string, body: unknown) => Promise<unknown>;
  events?: EventPublisher;
  /**
   * This node's record says it is a worker now, or its store does not answer (a member removed by a
   * demotion): the service asks another manager (heartbeat answer) and switches the node's role.
   */
  roleCheck?: () => void;
  /** The cluster record's autolock KEK (null: off) is not the one this node holds: the service syncs. */
  keyCheck?: (kekId: string | null) => void;
  /** This node's own certificate against the cluster's CA, each heartbeat (cert-renewer.ts). */
  caCheck?: (ca: { trustRoot: string; issuerKey: string }) => void;
  /** This node's Description.TLSInfo now (its trust root and its certificate's issuer). */
  tlsInfo?: () => ClusterObject | undefined;
  /** Fetches the unlock key of `kekId` from one of `managers` and keeps it (a manager just joined). */
  holdKey?: (kekId: string, managers: RemoteManager[]) => Promise<void>;
  /** Another manager's request for the logs of tasks this node runs (log-forward.ts). */
  logs?: (node: CertIdentity, body: unknown, signal: AbortSignal) => Promise<AsyncIterable<Buffer>>;
}

const CLUSTER_KEY = 'cluster';
const nodeKey = (id: string) => `nodes/${id}`;
const beatKey = (id: string) => `heartbeats/${id}`;
/** A node is down once it missed this many heartbeat periods. */
const MISSED_BEATS = 3;

export const etcdPorts = (advertisePort: number) => ({ client: advertisePort + 2, peer: advertisePort + 3 });

export function newNodeRecord(
  id: string,
  role: NodeRole,
  advertiseAddr: string,
  description: NodeRecord['Description'],
  availability = 'active',
): NodeRecord {
  const now = new Date().toISOString();
  const adv = parseAddr(advertiseAddr, 0, 'advertise address');
  return {
    ID: id,
    CreatedAt: now,
    UpdatedAt: now,
    Spec: { Labels: {}, Role: role, Availability: availability as NodeRecord['Spec']['Availability'] },
    Description: description,
    Addr: adv.host,
    // Kept for workers too: a promoted worker's endpoint and etcd ports follow from it.
    ManagerAddr: advertiseAddr,
  };
}

export class Manager {
  private server: Server | null = null;
  private beatTimer: NodeJS.Timeout | null = null;
  private periodSeconds = HEARTBEAT_PERIOD_NS / 1e9;
  private readonly log: Logger;
  /** Services and tasks on the store. */
  readonly services: ServicesApi;
  readonly secrets: FileObjectsApi;
  readonly configs: FileObjectsApi;
  readonly volumes: ClusterVolumesApi;
  private readonly loop: OrchestratorLoop;
  /** The cluster CA as heartbeat answers give it, from this manager's own beat (no read per heartbeat). */
  private caView: { trustRoot: string; issuerKey: string } | null = null;
  /** The managers as last read from the store (asked when the store itself does not answer). */
  private lastManagers: RemoteManager[];
  /** Records sealed at rest while autolocked (record-mode.ts). */
  private readonly records: RecordMode;

  private constructor(
    private readonly env: ManagerEnv,
    readonly state: LocalClusterState,
    private readonly certs: NodeCerts,
    private readonly member: EtcdMember,
    readonly store: ClusterStore,
  ) {
    this.log = env.log.child({ module: 'cluster' });
    this.lastManagers = state.managers;
    this.records = new RecordMode(
      store,
      () => env.files.kek,
      this.log,
      async (id) => env.holdKey?.(id, this.otherManagers()),
    );
    const key = clusterDataKey(store, (rec) => openClusterKeys(rec, env.files.kek).dataKey);
    const services = () => this.services.services();
    this.secrets = new FileObjectsApi('secrets', store, env.events, key, services);
    this.configs = new FileObjectsApi('configs', store, env.events, key, services);
    this.volumes = new ClusterVolumesApi(store);
    this.services = new ServicesApi(store, env.events, fileObjectHooks(this.secrets, this.configs), this.log);
    this.loop = new OrchestratorLoop(
      {
        store,
        api: this.services,
        lock: async () => {
          const s = await this.store.leader();
          return this.store.holdLock(ORCHESTRATOR_LOCK, LOCK_TTL_S, { node: this.state.nodeId }, s.leader === s.member);
        },
        nodes: async () => {
          const [all, live] = await Promise.all([this.nodeRecords(), this.liveness()]);
          return all.map((s) => ({ rec: s.value, up: live(s.value).up }));
        },
        historyLimit: async () => {
          const o = (await this.cluster()).value.Spec.Orchestration as { TaskHistoryRetentionLimit?: number } | undefined;
          return o?.TaskHistoryRetentionLimit ?? 5;
        },
      },
      this.log,
    );
  }

  /** A service changed: the orchestrator plans at once instead of at its next round. */
  kick(): void {
    this.loop.kick();
  }

  /** The endpoint's /logs (log-forward.ts). */
  logs(node: CertIdentity, body: unknown, signal: AbortSignal): Promise<AsyncIterable<Buffer>> {
    if (!this.env.logs) return Promise.reject(notFound('no such endpoint POST /logs'));
    return this.env.logs(node, body, signal);
  }

  /** The endpoint's /agent/sync: a node's task states in, its tasks out. */
  async agentSync(node: CertIdentity, body: AgentSyncRequest): Promise<SyncAnswer> {
    if (!Array.isArray(body?.reports)) throw invalidParameter('invalid agent reports');
    const since = typeof body.since === 'number' ? body.since : undefined;
    const logAddr = typeof body.logAddr === 'string' ? body.logAddr : undefined;
    return this.services.sync(node.nodeId, body.reports, typeof body.known === 'string' ? body.known : undefined, undefined, {
      since,
      logAddr,
    });
  }

  async nodesList(): Promise<NodeRecord[]> {
    return (await this.nodeRecords()).map((s) => s.value);
  }

  /** Starts etcd from the saved state, connects, listens, heartbeats. */
  /** `restart`: the member comes back among its peers and may have to wait for a quorum. */
  static async start(
    env: ManagerEnv,
    state: LocalClusterState,
    certs: NodeCerts,
    opts: { forceNewCluster?: boolean; promote?: () => Promise<void>; restart?: boolean } = {},
  ): Promise<Manager> {
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
    let store: ClusterStore | null = null;
    try {
      if (opts.promote) {
        // A joining manager starts as a learner: it becomes a voter once it has caught up.
        await opts.promote();
        const deadline = Date.now() + 60_000;
        while (!(await member.healthy())) {
          if (Date.now() > deadline) throw unavailable('the new etcd member did not become healthy within 60 s of its promotion');
          await new Promise((r) => setTimeout(r, 200));
        }
      }
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
      const cluster = await this.cluster();
      // Before anything reads or writes records: sealed or not, and the data key (fetched with the
      // unlock key from another manager if this one just joined an autolocked cluster).
      await this.records.apply(cluster.value, { fetchKey: true });
      const period = (cluster.value.Spec.Dispatcher as { HeartbeatPeriod?: number } | undefined)?.HeartbeatPeriod;
      if (typeof period === 'number' && period >= 1e9) this.periodSeconds = period / 1e9;
    } catch (err) {
      // A restarted manager without a quorum yet: serve anyway; the store answers once it is back.
      this.log.warn('cannot read the cluster object yet; using the default heartbeat period', { error: (err as Error).message });
    }
    // Independent steps together (each waits on the store or a socket; init waits on them all).
    const [server] = await Promise.all([
      startEndpoint(parseAddr(this.state.listenAddr, 0, 'listen address'), this.certs, this.state.clusterId, this, this.log),
      this.beat(),
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
    this.beatTimer = setInterval(() => void this.beat(), this.periodSeconds * 1000);
    this.beatTimer.unref();
    this.services.onChange(() => this.loop.kick());
    this.loop.start();
  }

  private async beat(): Promise<void> {
    try {
      await this.store.putLeased(
        beatKey(this.state.nodeId),
        { at: new Date().toISOString() },
        Math.ceil(this.periodSeconds * MISSED_BEATS),
      );
      const [self, managers] = await Promise.all([this.store.get<NodeRecord>(nodeKey(this.state.nodeId)), this.managers()]);
      if (managers.length) this.lastManagers = managers;
      if (self?.value.Spec.Role === 'worker') this.env.roleCheck?.();
      const c = await this.cluster();
      this.caView = { trustRoot: c.value.ca.certPem, issuerKey: desiredIssuerKey(c.value) };
      const lock = c.value.autolock?.kekId ?? null;
      if (lock !== this.env.files.kekId) this.env.keyCheck?.(lock);
      await this.records.apply(c.value);
      const tls = this.env.tlsInfo?.();
      if (self && tls) await this.reportTls(self, tls);
      // A rotation ended here tells this node of the new root itself.
      if (!(c.value.rotation && (await this.endRotation(c))))
        this.env.caCheck?.({ trustRoot: c.value.ca.certPem, issuerKey: desiredIssuerKey(c.value) });
    } catch (err) {
      this.log.warn('manager heartbeat failed', { error: (err as Error).message });
      this.env.roleCheck?.();
    }
  }

  /** The other managers as last known (to ask when this member's store does not answer). */
  otherManagers(): RemoteManager[] {
    return this.lastManagers.filter((m) => m.NodeID !== this.state.nodeId);
  }

  /** The unlock key this node holds changed, or the cluster record did: the records' mode follows. */
  async keysChanged(): Promise<void> {
    await this.records.apply((await this.cluster()).value);
  }

  /** Writes the cluster object and this node at `swarm init`. */
  async bootstrap(rec: ClusterRecord, node: NodeRecord): Promise<void> {
    await this.records.apply(rec); // autolock from the start: the node record is sealed already
    // Together: etcd commits concurrent writes in one round (one disk sync instead of two).
    await Promise.all([this.store.create(CLUSTER_KEY, rec), this.store.create(nodeKey(node.ID), node)]);
  }

  async cluster(): Promise<Stored<ClusterRecord>> {
    const c = await this.store.get<ClusterRecord>(CLUSTER_KEY);
    if (!c) throw unavailable('the cluster store holds no cluster object');
    return c;
  }

  async inspectCluster(withTokens = true): Promise<ClusterObject> {
    const c = await this.cluster();
    return clusterView(c.value, c.version, tlsInfoOf(c.value.ca.certPem), withTokens);
  }

  /**
   * Autolock turned on (or its key rotated): a new unlock key, the record's CA and data keys sealed
   * with its KEK, this node's key on disk too; off: all in the clear again. The other managers see
   * the record's KEK change at their next heartbeat and fetch the key from a manager that holds it.
   */
  async updateCluster(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void> {
    const c = await this.cluster();
    const next = withDefaults(spec);
    checkSpec(next);
    const lock = (next.EncryptionConfig as { AutoLockManagers?: boolean }).AutoLockManagers === true;
    if (lock && !c.value.autolock && c.value.rotation)
      throw notImplemented('turning autolock on during a root CA rotation is not built yet in this engine; wait until it ends');
    const caFields = await caUpdate(c.value, next, openClusterKeys(c.value, this.env.files.kek).ca);
    let rec: ClusterRecord = { ...c.value, Spec: storedSpec(next), UpdatedAt: new Date().toISOString(), ...caFields };
    if (caFields && !caFields.rotation) delete rec.rotation;
    if (opts.rotateWorkerToken) rec.JoinTokens = { ...rec.JoinTokens, Worker: newJoinToken(rec.ca.certPem) };
    if (opts.rotateManagerToken) rec.JoinTokens = { ...rec.JoinTokens, Manager: newJoinToken(rec.ca.certPem) };
    let unlockKey: Buffer | null | undefined; // undefined: unchanged
    if (lock && (!c.value.autolock || opts.rotateManagerUnlockKey)) unlockKey = newUnlockKey();
    else if (!lock && c.value.autolock) unlockKey = null;
    if (unlockKey !== undefined) {
      const keys = openClusterKeys(c.value, this.env.files.kek);
      rec = sealClusterKeys(rec, { ca: keys.ca, dataKey: keys.dataKey ?? newDataKey() }, unlockKey && kekOf(unlockKey));
    }
    await this.store.update(CLUSTER_KEY, rec, opts.version);
    this.caView = { trustRoot: rec.ca.certPem, issuerKey: desiredIssuerKey(rec) };
    if (caFields?.rotation && caFields.rotation !== c.value.rotation) this.log.info('root CA rotation started');
    if (unlockKey !== undefined) {
      this.env.files.rekey(unlockKey);
      this.log.info(unlockKey ? 'autolock: a new unlock key seals the cluster keys' : 'autolock turned off');
      // Switched on or off: the records are rewritten sealed or in the clear before the answer.
      await this.records.apply(rec);
    }
  }

  /** GET /swarm/unlockkey: the key while autolock is on (empty when off). */
  async unlockKeyView(): Promise<{ UnlockKey: string }> {
    const c = await this.cluster();
    if (!c.value.autolock) return { UnlockKey: '' };
    const key = this.env.files.unlockKey;
    if (!key || this.env.files.kekId !== c.value.autolock.kekId)
      throw unavailable('this manager does not hold the current unlock key yet; try again shortly');
    return { UnlockKey: formatUnlockKey(key) };
  }

  /** The endpoint's /unlock-key: another manager (only) fetches the key this one holds. */
  async unlockKey(node: CertIdentity): Promise<{ UnlockKey: string }> {
    // The certificate's role and the record's: a demoted manager's old certificate is not enough.
    const rec = await this.store.get<NodeRecord>(nodeKey(node.nodeId));
    if (node.role !== 'manager' || rec?.value.Spec.Role !== 'manager') throw forbidden('only managers may fetch the unlock key');
    const key = this.env.files.unlockKey;
    if (!key) throw notFound('this manager holds no unlock key');
    return { UnlockKey: formatUnlockKey(key) };
  }

  private async nodeRecords(): Promise<Stored<NodeRecord>[]> {
    return this.store.list<NodeRecord>('nodes/');
  }

  private async liveness(): Promise<(rec: NodeRecord) => { up: boolean; leader: boolean }> {
    const [beats, members, status] = await Promise.all([this.store.list('heartbeats/'), this.store.members(), this.store.leader()]);
    const up = new Set(beats.map((b) => b.key.slice('heartbeats/'.length)));
    const leaderName = members.find((m) => m.id === status.leader)?.name;
    return (rec) => ({ up: up.has(rec.ID), leader: rec.ID === leaderName });
  }

  async listNodes(filters: Map<string, string[]>): Promise<ClusterObject[]> {
    const all = await this.nodeRecords();
    const keep = new Set(
      filterNodes(
        all.map((s) => s.value),
        filters,
      ).map((n) => n.ID),
    );
    const live = await this.liveness();
    return all.filter((s) => keep.has(s.value.ID)).map((s) => nodeView(s.value, s.version, live(s.value)));
  }

  private async findNode(ref: string): Promise<Stored<NodeRecord>> {
    const all = await this.nodeRecords();
    const rec = findNode(
      all.map((s) => s.value),
      ref,
    );
    return all.find((s) => s.value.ID === rec.ID)!;
  }

  async inspectNode(ref: string): Promise<ClusterObject> {
    const s = await this.findNode(ref);
    return nodeView(s.value, s.version, (await this.liveness())(s.value));
  }

  /**
   * A role change is the record's: the node learns it from its heartbeat answer (with a certificate
   * for the role, and for a promotion an etcd learner added for it). A demotion removes the node's
   * etcd member here, after the record (the node may be this one: its store goes with the member).
   */
  async updateNode(ref: string, body: ClusterObject, version: number): Promise<void> {
    const s = await this.findNode(ref);
    const spec = checkNodeSpec(s.value.Spec, body);
    const demote = s.value.Spec.Role === 'manager' && spec.Role === 'worker';
    if (demote) await this.checkDemotable(s.value);
    const rec: NodeRecord = { ...s.value, Spec: spec, UpdatedAt: new Date().toISOString() };
    if (spec.Role === 'manager' && !rec.ManagerAddr) rec.ManagerAddr = `${rec.Addr}:2377`;
    const written = await this.store.update(nodeKey(s.value.ID), rec, version);
    if (!demote) return;
    const member = await this.memberOf(s.value.ID);
    if (!member) return;
    try {
      await this.store.removeMember(member);
    } catch (err) {
      await this.store
        .update(nodeKey(s.value.ID), { ...s.value, UpdatedAt: new Date().toISOString() }, written)
        .catch((e: Error) => this.log.warn('cannot restore the role of a node whose demotion failed', { error: e.message }));
      throw err;
    }
    this.log.info('manager demoted: its etcd member removed', { node: s.value.ID });
  }

  /** swarmkit's refusals of a demotion: the last manager, or one whose removal loses the quorum. */
  private async checkDemotable(rec: NodeRecord): Promise<void> {
    const managers = (await this.nodeRecords()).filter((n) => n.value.Spec.Role === 'manager');
    if (managers.length === 1 && managers[0]!.value.ID === rec.ID)
      throw invalidParameter('rpc error: code = FailedPrecondition desc = attempting to demote the last manager of the swarm');
    const live = await this.liveness();
    const remaining = managers.filter((n) => n.value.ID !== rec.ID);
    const reachable = remaining.filter((n) => live(n.value).up).length;
    if (reachable < Math.floor(remaining.length / 2) + 1)
      throw invalidParameter(
        "rpc error: code = FailedPrecondition desc = can't remove member from the raft: this would result in a loss of quorum",
      );
  }

  async removeNode(ref: string, force: boolean): Promise<void> {
    const s = await this.findNode(ref);
    checkRemovable(s.value, (await this.liveness())(s.value).up, force);
    await this.store.delete(nodeKey(s.value.ID));
    await this.store.delete(beatKey(s.value.ID));
  }

  /** After etcd's --force-new-cluster: the other managers' records and heartbeats go (as dockerd). */
  async dropOtherManagers(): Promise<void> {
    for (const n of await this.nodeRecords()) {
      if (n.value.Spec.Role !== 'manager' || n.value.ID === this.state.nodeId) continue;
      await this.store.delete(nodeKey(n.value.ID));
      await this.store.delete(beatKey(n.value.ID));
      this.log.info('manager dropped from the forced new cluster', { node: n.value.ID });
    }
  }

  /** The managers, for /info's RemoteManagers and for workers. */
  async managers(): Promise<RemoteManager[]> {
    return managersOf(await this.nodeRecords());
  }

  /** /info's Swarm section. */
  async info(): Promise<ClusterObject> {
    const [nodes, cluster] = await Promise.all([this.nodeRecords(), this.inspectCluster(false)]);
    const managers = nodes.filter((s) => s.value.Spec.Role === 'manager');
    return {
      Nodes: nodes.length,
      Managers: managers.length,
      Cluster: cluster,
      RemoteManagers: managers.filter((s) => s.value.ManagerAddr).map((s) => ({ NodeID: s.value.ID, Addr: s.value.ManagerAddr })),
    };
  }

  // ---- the endpoint's handler ----------------------------------------------------------------

  caPem(): string {
    return this.certs.caPem;
  }

  async join(req: JoinRequest, from?: string): Promise<JoinResponse> {
    if (typeof req?.token !== 'string' || typeof req.publicKeyPem !== 'string' || typeof req.advertiseAddr !== 'string')
      throw invalidParameter('invalid join request');
    parseJoinToken(req.token);
    const c = await this.cluster();
    const role: NodeRole | null = sameToken(req.token, c.value.JoinTokens.Manager)
      ? 'manager'
      : sameToken(req.token, c.value.JoinTokens.Worker)
        ? 'worker'
        : null;
    if (!role) throw invalidParameter('A valid join token is necessary to join this cluster');
    if (role === 'manager') await this.settleBeforeGrowing();
    const adv = parseAddr(req.advertiseAddr, 0, 'advertise address');
    // A node that joins without an advertise address (0.0.0.0:port) is reached at the address it
    // connects from, as swarmkit's raft join does.
    if ((adv.host === '0.0.0.0' || adv.host === '::') && from) adv.host = from.replace(/^::ffff:(?=\d+\.)/, '');
    const listen = parseAddr(req.listenAddr || req.advertiseAddr, adv.port, 'listen address');
    const nodeId = newId();
    const certPem = await issueNodeCert(this.signer(c.value), req.publicKeyPem, {
      nodeId,
      role,
      clusterId: this.state.clusterId,
      ips: certificateIps(adv.host, listen.host),
      lifetimeMs: nodeCertLifetimeMs(c.value),
    });
    const description = (req.description ?? {}) as NodeRecord['Description'];
    const availability = req.availability ?? 'active';
    if (availability !== 'active' && availability !== 'pause' && availability !== 'drain')
      throw invalidParameter(`invalid availability ${JSON.stringify(availability)}`);
    await this.store.create(nodeKey(nodeId), newNodeRecord(nodeId, role, formatHostPort(adv), description, availability));
    const res: JoinResponse = {
      nodeId,
      clusterId: this.state.clusterId,
      role,
      certPem,
      caPem: this.certs.caPem,
      managers: await this.managers(),
      advertiseAddr: formatHostPort(adv),
    };
    if (role === 'manager') {
      const peer = peerUrl(adv.host, etcdPorts(adv.port).peer);
      const { members } = await this.store.addMember(peer).catch(async (err: Error) => {
        await this.store
          .delete(nodeKey(nodeId))
          .catch((e: Error) => this.log.warn('cannot remove the node record of a failed join', { error: e.message }));
        throw err;
      });
      const initialCluster = members.map((m) => `${m.name || nodeId}=${m.peerUrls[0]}`).join(',');
      res.etcd = { initialCluster, clusterToken: this.state.etcd!.clusterToken };
    }
    this.log.info('node joined the cluster', { node: nodeId, role, addr: req.advertiseAddr });
    return res;
  }

  /**
   * A node's heartbeat: its lease refreshed (no write, store.ts putLeased). Its record and the
   * managers come from the watch-fed cache: a heartbeat would otherwise read every node record
   * (100 nodes: ~20 lists of 100 records a second); a node not in the cache yet (it just joined
   * through another manager) is read from the store.
   */
  async heartbeat(node: CertIdentity, certPem: string, body: HeartbeatRequest = {}): Promise<HeartbeatResponse> {
    const cache = this.services.cache.ready ? this.services.cache : undefined;
    const rec = cache?.nodes.items.get(nodeKey(node.nodeId)) ?? (await this.store.get<NodeRecord>(nodeKey(node.nodeId)));
    if (!rec) throw notFound(`node ${node.nodeId} not found`);
    await this.store.putLeased(beatKey(node.nodeId), { at: new Date().toISOString() }, Math.ceil(this.periodSeconds * MISSED_BEATS));
    if (body && typeof body.tlsInfo === 'object' && body.tlsInfo !== null) await this.reportTls(rec, body.tlsInfo);
    const role = rec.value.Spec.Role;
    const managers = cache ? managersOf(cache.nodes.items.values()) : await this.managers();
    const res: HeartbeatResponse = { managers, periodSeconds: this.periodSeconds, role };
    if (this.caView) res.ca = this.caView;
    if (role === node.role) return res;
    const cluster = (await this.cluster()).value;
    // The node's role changed: a certificate for the new one (same key), and for a promotion an
    // etcd learner it starts its member as (the same one again if an earlier answer was lost).
    res.certPem = await reissueForRole(this.signer(cluster), certPem, role, nodeCertLifetimeMs(cluster));
    if (role === 'manager') res.etcd = await this.learnerFor(rec.value);
    this.log.info('node told of its new role', { node: node.nodeId, role });
    return res;
  }

  /** What signs node certificates (the root, or the new root during a rotation). */
  private signer(rec: ClusterRecord) {
    return signerOf(rec, openClusterKeys(rec, this.env.files.kek).ca);
  }

  /**
   * The endpoint's /renew: a new certificate for the key the node sends, with the identity of the one
   * it presented (node, role, cluster, IP addresses), the current lifetime and signer. Role changes
   * go through the heartbeat (the record's role is not taken here).
   */
  async renew(node: CertIdentity, certPem: string, body: { publicKeyPem?: unknown }): Promise<RenewResponse> {
    if (typeof body?.publicKeyPem !== 'string') throw invalidParameter('invalid certificate renewal request');
    if (!(await this.store.get<NodeRecord>(nodeKey(node.nodeId)))) throw notFound(`node ${node.nodeId} not found`);
    const c = (await this.cluster()).value;
    const issued = await issueNodeCert(this.signer(c), body.publicKeyPem, {
      nodeId: node.nodeId,
      role: node.role,
      clusterId: node.clusterId,
      ips: certIps(certPem),
      lifetimeMs: nodeCertLifetimeMs(c),
    });
    this.log.info('node certificate renewed', { node: node.nodeId, rotation: !!c.rotation });
    return { certPem: issued, trustRoot: c.ca.certPem };
  }

  /** A node's Description.TLSInfo as it reports it (the rotation's progress is read from these). */
  private async reportTls(rec: Stored<NodeRecord>, info: ClusterObject): Promise<void> {
    const cur = rec.value.Description.TLSInfo as ClusterObject | undefined;
    if (cur && ['TrustRoot', 'CertIssuerSubject', 'CertIssuerPublicKey'].every((k) => cur[k] === info[k])) return;
    const TLSInfo = {
      TrustRoot: String(info.TrustRoot ?? ''),
      CertIssuerSubject: String(info.CertIssuerSubject ?? ''),
      CertIssuerPublicKey: String(info.CertIssuerPublicKey ?? ''),
    };
    await this.store
      .update(nodeKey(rec.value.ID), { ...rec.value, Description: { ...rec.value.Description, TLSInfo } }, rec.version)
      .catch((err: Error) => this.log.debug('node TLS info not recorded (the record changed meanwhile)', { error: err.message }));
  }

  /** Ends a root rotation once every node's certificate is of the new root (a compare-and-swap). */
  private async endRotation(c: Stored<ClusterRecord>): Promise<boolean> {
    const nodes = await this.nodeRecords();
    const keys = nodes.map((n) => String((n.value.Description.TLSInfo as ClusterObject | undefined)?.CertIssuerPublicKey ?? ''));
    const done = finishRotation(c.value, keys);
    if (!done) return false;
    return this.store.update(CLUSTER_KEY, done, c.version).then(
      () => {
        this.log.info('root CA rotation complete: every node holds a certificate of the new root; join tokens changed');
        this.caView = { trustRoot: done.ca.certPem, issuerKey: desiredIssuerKey(done) };
        this.env.caCheck?.(this.caView);
        return true;
      },
      (err: Error) => {
        this.log.debug('root rotation end not written (the cluster changed meanwhile)', { error: err.message });
        return false;
      },
    );
  }

  /** The endpoint's TLS after this node's certificate or trust root changed; the change reported soon. */
  refreshTls(): void {
    this.server?.setSecureContext({ cert: this.certs.certPem, key: this.certs.keyPem, ca: this.certs.caPem });
    if (this.beatTimer) setTimeout(() => void this.beat(), 100).unref();
  }

  /**
   * A founding member leaves the short Raft timings before the cluster grows (a join or a
   * promotion adds a member); what grows it goes on once this manager's store answers again.
   */
  private async settleBeforeGrowing(): Promise<void> {
    if (!this.member.alone) return;
    await this.member.settle();
    const deadline = Date.now() + 30_000;
    while (
      !(await this.store.get(CLUSTER_KEY).then(
        () => true,
        () => false,
      ))
    ) {
      if (Date.now() > deadline) throw unavailable('the cluster store did not answer again after its etcd restart');
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  private async learnerFor(rec: NodeRecord): Promise<{ initialCluster: string; clusterToken: string }> {
    await this.settleBeforeGrowing();
    const addr = parseAddr(rec.ManagerAddr ?? `${rec.Addr}:2377`, 2377, 'manager address');
    const peer = peerUrl(addr.host, etcdPorts(addr.port).peer);
    let members = await this.store.members();
    if (!members.some((m) => m.name === rec.ID || m.peerUrls.includes(peer))) members = (await this.store.addMember(peer)).members;
    return {
      initialCluster: members.map((m) => `${m.name || rec.ID}=${m.peerUrls[0]}`).join(','),
      clusterToken: this.state.etcd!.clusterToken,
    };
  }

  async promote(node: CertIdentity): Promise<void> {
    const id = await this.memberOf(node.nodeId);
    if (!id) throw notFound(`no etcd member for node ${node.nodeId}`);
    await this.store.promoteMember(id);
    this.log.info('manager promoted to a voting etcd member', { node: node.nodeId });
  }

  /** The etcd member of a node: by name once it started, by peer URL before. */
  private async memberOf(nodeId: string): Promise<string | undefined> {
    const rec = await this.store.get<NodeRecord>(nodeKey(nodeId));
    const peer = rec?.value.ManagerAddr
      ? peerUrl(rec.value.Addr, etcdPorts(parseAddr(rec.value.ManagerAddr, 0, 'manager address').port).peer)
      : undefined;
    return (await this.store.members()).find((m) => m.name === nodeId || (peer !== undefined && m.peerUrls.includes(peer)))?.id;
  }

  async leave(node: CertIdentity, abort: boolean): Promise<void> {
    await this.store.delete(beatKey(node.nodeId));
    if (!abort) return;
    const member = node.role === 'manager' ? await this.memberOf(node.nodeId) : undefined;
    if (member) await this.store.removeMember(member);
    await this.store.delete(nodeKey(node.nodeId));
    this.log.info('a join that did not complete was undone', { node: node.nodeId });
  }

  async overlay(node: CertIdentity, op: string, body: unknown): Promise<unknown> {
    if (!this.env.overlay) throw notFound('overlay networks are not served by this manager');
    return this.env.overlay(node, op, body);
  }

  // ---- leaving and stopping ------------------------------------------------------------------

  /** dockerd's refusal of `swarm leave` without force on a manager, or the removal of this member. */
  async leaveCluster(force: boolean): Promise<void> {
    const members = await this.store.members().catch((err: Error) => {
      if (!force) throw err;
      this.log.warn('cannot read the etcd members while leaving by force', { error: err.message });
      return [];
    });
    if (!force) {
      const live = await this.liveness();
      const managers = (await this.nodeRecords()).filter((s) => s.value.Spec.Role === 'manager');
      const reachable = managers.filter((s) => live(s.value).up).length;
      const unreachable = managers.length - reachable;
      let msg = 'You are attempting to leave the swarm on a node that is participating as a manager. ';
      if (reachable - 1 <= unreachable) {
        if (reachable === 1 && unreachable === 0)
          throw unavailable(
            `${msg}Removing the last manager erases all current state of the swarm. Use \`--force\` to ignore this message. `.trimEnd(),
          );
        msg += `Removing this node leaves ${reachable - 1} managers out of ${reachable + unreachable}. Without a Raft quorum your swarm will be inaccessible. `;
      }
      throw unavailable(
        `${msg}The only way to restore a swarm that has lost consensus is to reinitialize it with \`--force-new-cluster\`. Use \`--force\` to suppress this message.`,
      );
    }
    const self = members.find((m) => m.name === this.state.nodeId);
    if (self && members.length > 1) {
      await this.store
        .delete(beatKey(this.state.nodeId))
        .catch((err: Error) => this.log.warn("cannot clear this node's heartbeat", { error: err.message }));
      // Only forced leaves get here: a member that cannot be removed now (no answer in time, no
      // quorum) still leaves, as asked, and says so.
      await this.store.removeMember(self.id).catch((err: Error) => {
        this.log.warn('cannot remove this node from the store while leaving by force', { error: err.message });
      });
    }
  }

  async stop(): Promise<void> {
    this.loop.stop();
    // Another manager orchestrates at once rather than after the lock's lease runs out.
    await Promise.race([this.store.releaseLock(ORCHESTRATOR_LOCK), new Promise((r) => setTimeout(r, 1000).unref())]);
    await this.services.close();
    if (this.beatTimer) clearInterval(this.beatTimer);
    this.beatTimer = null;
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

/**
 * The managers among node records, by node ID: every manager answers the same list whether it read
 * the store (key order) or its cache (arrival order), so a worker's index into it (worker.ts
 * `firstManager`) names the same manager.
 */
function managersOf(nodes: Iterable<Stored<NodeRecord>>): RemoteManager[] {
  const out: RemoteManager[] = [];
  for (const s of nodes)
    if (s.value.Spec.Role === 'manager' && s.value.ManagerAddr) out.push({ NodeID: s.value.ID, Addr: s.value.ManagerAddr });
  return out.sort((a, b) => (a.NodeID < b.NodeID ? -1 : a.NodeID > b.NodeID ? 1 : 0));
}
