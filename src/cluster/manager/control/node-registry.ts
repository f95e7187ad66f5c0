// A manager's side of the node records: the list and inspect views with liveness (heartbeat keys)
// and leadership, role changes and removals (with the etcd member a manager's record goes with),
// heartbeat leases, TLS reports, and this manager's own leave of the etcd membership.
import { conflict, invalidParameter, unavailable } from '../../../errors.ts';
import type { ClusterObject } from '../../../types/cluster.ts';
import type { Logger } from '../../../util/log.ts';
import { parseAddr } from '../../node/addresses.ts';
import type { RemoteManager } from '../../node/local-state.ts';
import { etcdPorts, peerUrl } from '../../store/etcd-process.ts';
import { NO_LEADER, OUT_OF_SEQUENCE, type ClusterStore, type Stored } from '../../store/store.ts';
import { checkNodeSpec, checkRemovable, filterNodes, findNode, nodeView, type NodeRecord, type NodeView } from '../nodes.ts';

export const nodeKey = (id: string) => `nodes/${id}`;
export const beatKey = (id: string) => `heartbeats/${id}`;
/** A node is down once it missed this many heartbeat periods. */
const MISSED_BEATS = 3;

export class NodeRegistry {
  constructor(
    private readonly store: ClusterStore,
    /** This manager's node ID. */
    private readonly selfId: string,
    private readonly log: Logger,
  ) {}

  records(): Promise<Stored<NodeRecord>[]> {
    return this.store.list<NodeRecord>('nodes/');
  }

  async nodesList(): Promise<NodeRecord[]> {
    return (await this.records()).map((s) => s.value);
  }

  /** A node's heartbeat lease refreshed: present for this many periods (no write, store.ts putLeased). */
  async touch(nodeId: string, periodSeconds: number): Promise<void> {
    await this.store.leases.putLeased(beatKey(nodeId), { at: new Date().toISOString() }, Math.ceil(periodSeconds * MISSED_BEATS));
  }

  async liveness(): Promise<(rec: NodeRecord) => { up: boolean; leader: boolean }> {
    const [beats, members, status] = await Promise.all([
      this.store.list('heartbeats/'),
      this.store.membership.list(),
      this.store.membership.leader(),
    ]);
    const up = new Set(beats.map((b) => b.key.slice('heartbeats/'.length)));
    const leaderName = members.find((m) => m.id === status.leader)?.name;
    return (rec) => ({ up: up.has(rec.ID), leader: rec.ID === leaderName });
  }

  async list(filters: Map<string, string[]>): Promise<NodeView[]> {
    const all = await this.records();
    const keep = new Set(
      filterNodes(
        all.map((s) => s.value),
        filters,
      ).map((n) => n.ID),
    );
    const live = await this.liveness();
    return all.filter((s) => keep.has(s.value.ID)).map((s) => nodeView(s.value, s.version, live(s.value)));
  }

  private async find(ref: string): Promise<Stored<NodeRecord>> {
    const all = await this.records();
    const rec = findNode(
      all.map((s) => s.value),
      ref,
    );
    return all.find((s) => s.value.ID === rec.ID)!;
  }

  async inspect(ref: string): Promise<NodeView> {
    const s = await this.find(ref);
    return nodeView(s.value, s.version, (await this.liveness())(s.value));
  }

  /**
   * A role change is the record's: the node learns it from its heartbeat answer (with a certificate
   * for the role, and for a promotion an etcd learner added for it). A demotion removes the node's
   * etcd member here: before the record for another node, which stops its etcd once it learns it is
   * a worker (record first, a member that etcd would not remove yet — its strict reconfiguration
   * check refuses for ~5 s after a promotion — lost its etcd, and two managers their quorum); after
   * the record for this one, whose store goes with its member.
   */
  async update(ref: string, body: ClusterObject, version: number): Promise<void> {
    const s = await this.find(ref);
    const spec = checkNodeSpec(s.value.Spec, body);
    const demote = s.value.Spec.Role === 'manager' && spec.Role === 'worker';
    if (demote) await this.checkDemotable(s.value);
    const rec: NodeRecord = { ...s.value, Spec: spec, UpdatedAt: new Date().toISOString() };
    if (spec.Role === 'manager' && !rec.ManagerAddr) rec.ManagerAddr = `${rec.Addr}:2377`;
    if (demote && s.value.ID !== this.selfId) {
      if (version !== s.version) throw conflict(OUT_OF_SEQUENCE); // checked before the member goes
      const member = await this.memberOf(s.value.ID);
      if (member) await this.store.membership.remove(member);
      await writeAfterRemoval(this.store, nodeKey(s.value.ID), rec, version);
      if (member) this.log.info('manager demoted: its etcd member removed', { node: s.value.ID });
      return;
    }
    const written = await this.store.update(nodeKey(s.value.ID), rec, version);
    if (!demote) return;
    const member = await this.memberOf(s.value.ID);
    if (!member) return;
    try {
      await this.store.membership.remove(member);
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
    const managers = (await this.records()).filter((n) => n.value.Spec.Role === 'manager');
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

  async remove(ref: string, force: boolean): Promise<void> {
    const s = await this.find(ref);
    checkRemovable(s.value, (await this.liveness())(s.value).up, force);
    await this.store.delete(nodeKey(s.value.ID));
    await this.store.delete(beatKey(s.value.ID));
  }

  /** After etcd's --force-new-cluster: the other managers' records and heartbeats go (as dockerd). */
  async dropOtherManagers(): Promise<void> {
    for (const n of await this.records()) {
      if (n.value.Spec.Role !== 'manager' || n.value.ID === this.selfId) continue;
      await this.store.delete(nodeKey(n.value.ID));
      await this.store.delete(beatKey(n.value.ID));
      this.log.info('manager dropped from the forced new cluster', { node: n.value.ID });
    }
  }

  /** The managers, for /info's RemoteManagers and for workers. */
  async managers(): Promise<RemoteManager[]> {
    return managersOf(await this.records());
  }

  /** The etcd member of a node: by name once it started, by peer URL before. */
  async memberOf(nodeId: string): Promise<string | undefined> {
    const rec = await this.store.get<NodeRecord>(nodeKey(nodeId));
    const peer = rec?.value.ManagerAddr
      ? peerUrl(rec.value.Addr, etcdPorts(parseAddr(rec.value.ManagerAddr, 0, 'manager address').port).peer)
      : undefined;
    return (await this.store.membership.list()).find((m) => m.name === nodeId || (peer !== undefined && m.peerUrls.includes(peer)))?.id;
  }

  /** A node's Description.TLSInfo as it reports it (the rotation's progress is read from these). */
  async recordTls(rec: Stored<NodeRecord>, info: ClusterObject): Promise<void> {
    const cur = rec.value.Description.TLSInfo;
    if (cur && (['TrustRoot', 'CertIssuerSubject', 'CertIssuerPublicKey'] as const).every((k) => cur[k] === info[k])) return;
    const TLSInfo = {
      TrustRoot: String(info.TrustRoot ?? ''),
      CertIssuerSubject: String(info.CertIssuerSubject ?? ''),
      CertIssuerPublicKey: String(info.CertIssuerPublicKey ?? ''),
    };
    await this.store
      .update(nodeKey(rec.value.ID), { ...rec.value, Description: { ...rec.value.Description, TLSInfo } }, rec.version)
      .catch((err: Error) => this.log.debug('node TLS info not recorded (the record changed meanwhile)', { error: err.message }));
  }

  /** dockerd's refusal of `swarm leave` without force on a manager, or the removal of this member. */
  async leaveCluster(force: boolean): Promise<void> {
    const members = await this.store.membership.list().catch((err: Error) => {
      if (!force) throw err;
      this.log.warn('cannot read the etcd members while leaving by force', { error: err.message });
      return [];
    });
    if (!force) {
      const live = await this.liveness();
      const managers = (await this.records()).filter((s) => s.value.Spec.Role === 'manager');
      const reachable = managers.filter((s) => live(s.value).up).length;
      throw unavailable(leaveRefusal(reachable, managers.length - reachable));
    }
    const self = members.find((m) => m.name === this.selfId);
    if (self && members.length > 1) {
      await this.store
        .delete(beatKey(this.selfId))
        .catch((err: Error) => this.log.warn("cannot clear this node's heartbeat", { error: err.message }));
      // Only forced leaves get here: a member that cannot be removed now (no answer in time, no
      // quorum) still leaves, as asked, and says so.
      await this.store.membership.remove(self.id).catch((err: Error) => {
        this.log.warn('cannot remove this node from the store while leaving by force', { error: err.message });
      });
    }
  }
}

/** dockerd's words refusing a manager's `swarm leave` without force, by the managers reachable. */
function leaveRefusal(reachable: number, unreachable: number): string {
  let msg = 'You are attempting to leave the swarm on a node that is participating as a manager. ';
  if (reachable - 1 <= unreachable) {
    if (reachable === 1 && unreachable === 0)
      return `${msg}Removing the last manager erases all current state of the swarm. Use \`--force\` to ignore this message. `.trimEnd();
    msg += `Removing this node leaves ${reachable - 1} managers out of ${reachable + unreachable}. Without a Raft quorum your swarm will be inaccessible. `;
  }
  return `${msg}The only way to restore a swarm that has lost consensus is to reinitialize it with \`--force-new-cluster\`. Use \`--force\` to suppress this message.`;
}

/**
 * The managers among node records, by node ID: every manager answers the same list whether it read
 * the store (key order) or its cache (arrival order), so a worker's index into it (worker.ts
 * `firstManager`) names the same manager.
 */
export function managersOf(nodes: Iterable<Stored<NodeRecord>>): RemoteManager[] {
  const out: RemoteManager[] = [];
  for (const s of nodes)
    if (s.value.Spec.Role === 'manager' && s.value.ManagerAddr) out.push({ NodeID: s.value.ID, Addr: s.value.ManagerAddr });
  return out.sort((a, b) => (a.NodeID < b.NodeID ? -1 : a.NodeID > b.NodeID ? 1 : 0));
}

/** A write right after a member went: while the one removed led, the others elect a leader first. */
async function writeAfterRemoval(store: ClusterStore, key: string, rec: NodeRecord, version: number): Promise<void> {
  const deadline = Date.now() + 15_000;
  for (let retried = false; ; retried = true) {
    try {
      await store.update(key, rec, version);
      return;
    } catch (err) {
      // A timed-out try may have been written: the retry then finds the record moved on, with the role.
      if (retried && (err as Error).message === OUT_OF_SEQUENCE && (await store.get<NodeRecord>(key))?.value.Spec.Role === rec.Spec.Role)
        return;
      if ((err as Error).message !== NO_LEADER || Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}
