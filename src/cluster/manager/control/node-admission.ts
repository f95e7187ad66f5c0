// What a manager's endpoint answers other nodes about their membership: joins (token, certificate,
// node record, an etcd learner for a manager), heartbeats (lease, role changes with a reissued
// certificate), certificate renewals, a learner's promotion to voter, and leaves.
import { invalidParameter, notFound, unavailable } from '../../../errors.ts';
import type { Logger } from '../../../util/log.ts';
import { openClusterKeys } from '../../ca/autolock.ts';
import { certIps, issueNodeCert, reissueForRole, type CertIdentity, type NodeRole } from '../../ca/ca.ts';
import { nodeCertLifetimeMs, signerOf } from '../../ca/ca-rotation.ts';
import type { ClusterRecord } from '../../ca/swarm-object.ts';
import { parseJoinToken, sameToken } from '../../ca/tokens.ts';
import { newId } from '../../ids.ts';
import { certificateIps, formatHostPort, parseAddr } from '../../node/addresses.ts';
import type { HeartbeatRequest, HeartbeatResponse, JoinRequest, JoinResponse, RenewResponse } from '../../node/endpoint.ts';
import type { LocalStateFiles, NodeCerts } from '../../node/local-state.ts';
import type { ClusterCache } from '../../store/cluster-cache.ts';
import { etcdPorts, peerUrl } from '../../store/etcd-process.ts';
import type { ClusterStore } from '../../store/store.ts';
import { CLUSTER_KEY, type ClusterSettings } from './cluster-settings.ts';
import { beatKey, managersOf, nodeKey, type NodeRegistry } from './node-registry.ts';
import { newNodeRecord, type NodeRecord } from '../nodes.ts';

export interface NodeAdmissionDeps {
  store: ClusterStore;
  nodes: NodeRegistry;
  settings: ClusterSettings;
  /** This manager's etcd member: a founding member alone settles its Raft timings before growing. */
  member: { readonly alone: boolean; settle(): Promise<void> };
  certs: NodeCerts;
  clusterId: string;
  /** The etcd cluster token new members start with. */
  etcdToken: string;
  /** The key that opens the cluster's CA key (autolock). */
  files: LocalStateFiles;
  /** The heartbeat period and the CA the answers name (this manager's own beat). */
  beat: { readonly periodSeconds: number; readonly caView: { trustRoot: string; issuerKey: string } | null };
  /** The watch-fed records (node records and managers without a store read), once ready. */
  cache: () => ClusterCache | undefined;
  log: Logger;
}

export class NodeAdmission {
  constructor(private readonly d: NodeAdmissionDeps) {}

  async join(req: JoinRequest, from?: string): Promise<JoinResponse> {
    if (typeof req?.token !== 'string' || typeof req.publicKeyPem !== 'string' || typeof req.advertiseAddr !== 'string')
      throw invalidParameter('invalid join request');
    parseJoinToken(req.token);
    const c = await this.d.settings.get();
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
      clusterId: this.d.clusterId,
      ips: certificateIps(adv.host, listen.host),
      lifetimeMs: nodeCertLifetimeMs(c.value),
    });
    const description = (req.description ?? {}) as NodeRecord['Description'];
    const availability = req.availability ?? 'active';
    if (availability !== 'active' && availability !== 'pause' && availability !== 'drain')
      throw invalidParameter(`invalid availability ${JSON.stringify(availability)}`);
    const { store } = this.d;
    await store.create(nodeKey(nodeId), newNodeRecord(nodeId, role, formatHostPort(adv), description, availability));
    const res: JoinResponse = {
      nodeId,
      clusterId: this.d.clusterId,
      role,
      certPem,
      caPem: this.d.certs.caPem,
      managers: await this.d.nodes.managers(),
      advertiseAddr: formatHostPort(adv),
    };
    if (role === 'manager') {
      const peer = peerUrl(adv.host, etcdPorts(adv.port).peer);
      const { members } = await store.membership.add(peer).catch(async (err: Error) => {
        await store
          .delete(nodeKey(nodeId))
          .catch((e: Error) => this.d.log.warn('cannot remove the node record of a failed join', { error: e.message }));
        throw err;
      });
      const initialCluster = members.map((m) => `${m.name || nodeId}=${m.peerUrls[0]}`).join(',');
      res.etcd = { initialCluster, clusterToken: this.d.etcdToken };
    }
    this.d.log.info('node joined the cluster', { node: nodeId, role, addr: req.advertiseAddr });
    return res;
  }

  /**
   * A node's heartbeat: its lease refreshed (no write, store.ts putLeased). Its record and the
   * managers come from the watch-fed cache: a heartbeat would otherwise read every node record
   * (100 nodes: ~20 lists of 100 records a second); a node not in the cache yet (it just joined
   * through another manager) is read from the store.
   */
  async heartbeat(node: CertIdentity, certPem: string, body: HeartbeatRequest = {}): Promise<HeartbeatResponse> {
    const { store, nodes, beat } = this.d;
    const cache = this.d.cache();
    const rec = cache?.nodes.items.get(nodeKey(node.nodeId)) ?? (await store.get<NodeRecord>(nodeKey(node.nodeId)));
    if (!rec) throw notFound(`node ${node.nodeId} not found`);
    await nodes.touch(node.nodeId, beat.periodSeconds);
    if (body && typeof body.tlsInfo === 'object' && body.tlsInfo !== null) await nodes.recordTls(rec, body.tlsInfo);
    const role = rec.value.Spec.Role;
    const managers = cache ? managersOf(cache.nodes.items.values()) : await nodes.managers();
    const res: HeartbeatResponse = { managers, periodSeconds: beat.periodSeconds, role };
    if (beat.caView) res.ca = beat.caView;
    if (role === node.role) return res;
    const cluster = (await this.d.settings.get()).value;
    // The node's role changed: a certificate for the new one (same key), and for a promotion an
    // etcd learner it starts its member as (the same one again if an earlier answer was lost).
    res.certPem = await reissueForRole(this.signer(cluster), certPem, role, nodeCertLifetimeMs(cluster));
    if (role === 'manager') res.etcd = await this.learnerFor(rec.value);
    this.d.log.info('node told of its new role', { node: node.nodeId, role });
    return res;
  }

  /** What signs node certificates (the root, or the new root during a rotation). */
  private signer(rec: ClusterRecord) {
    return signerOf(rec, openClusterKeys(rec, this.d.files.kek).ca);
  }

  /**
   * The endpoint's /renew: a new certificate for the key the node sends, with the identity of the one
   * it presented (node, role, cluster, IP addresses), the current lifetime and signer. Role changes
   * go through the heartbeat (the record's role is not taken here).
   */
  async renew(node: CertIdentity, certPem: string, body: { publicKeyPem?: unknown }): Promise<RenewResponse> {
    if (typeof body?.publicKeyPem !== 'string') throw invalidParameter('invalid certificate renewal request');
    if (!(await this.d.store.get<NodeRecord>(nodeKey(node.nodeId)))) throw notFound(`node ${node.nodeId} not found`);
    const c = (await this.d.settings.get()).value;
    const issued = await issueNodeCert(this.signer(c), body.publicKeyPem, {
      nodeId: node.nodeId,
      role: node.role,
      clusterId: node.clusterId,
      ips: certIps(certPem),
      lifetimeMs: nodeCertLifetimeMs(c),
    });
    this.d.log.info('node certificate renewed', { node: node.nodeId, rotation: !!c.rotation });
    return { certPem: issued, trustRoot: c.ca.certPem };
  }

  /**
   * A founding member leaves the short Raft timings before the cluster grows (a join or a
   * promotion adds a member); what grows it goes on once this manager's store answers again.
   */
  private async settleBeforeGrowing(): Promise<void> {
    if (!this.d.member.alone) return;
    await this.d.member.settle();
    const deadline = Date.now() + 30_000;
    while (
      !(await this.d.store.get(CLUSTER_KEY).then(
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
    let members = await this.d.store.membership.list();
    if (!members.some((m) => m.name === rec.ID || m.peerUrls.includes(peer))) members = (await this.d.store.membership.add(peer)).members;
    return {
      initialCluster: members.map((m) => `${m.name || rec.ID}=${m.peerUrls[0]}`).join(','),
      clusterToken: this.d.etcdToken,
    };
  }

  async promote(node: CertIdentity): Promise<void> {
    const id = await this.d.nodes.memberOf(node.nodeId);
    if (!id) throw notFound(`no etcd member for node ${node.nodeId}`);
    await this.d.store.membership.promote(id);
    this.d.log.info('manager promoted to a voting etcd member', { node: node.nodeId });
  }

  async leave(node: CertIdentity, abort: boolean): Promise<void> {
    await this.d.store.delete(beatKey(node.nodeId));
    if (!abort) return;
    const member = node.role === 'manager' ? await this.d.nodes.memberOf(node.nodeId) : undefined;
    if (member) await this.d.store.membership.remove(member);
    await this.d.store.delete(nodeKey(node.nodeId));
    this.d.log.info('a join that did not complete was undone', { node: node.nodeId });
  }
}
