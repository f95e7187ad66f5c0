// A node entering and leaving a cluster: `swarm init` (a new cluster, its ingress network),
// `swarm init --force-new-cluster` (a manager that lost its quorum restarts its member alone),
// `swarm join` (admission by a manager, then the role's runtime) and `swarm leave`. The service
// runs each through the lifecycle queue (node-phase.ts).
import { invalidParameter, unavailable } from '../../errors.ts';
import type { ClusterObject, SwarmInitRequest, SwarmJoinRequest } from '../../types/cluster.ts';
import type { Logger } from '../../util/log.ts';
import { LOCKED } from '../ca/autolock.ts';
import { identityOf, issuerInChain, newKeyPair } from '../ca/ca.ts';
import { mergeInitSpec } from '../ca/swarm-object.ts';
import { caDigest, tokenMatchesCa } from '../ca/tokens.ts';
import { NOT_IN_A_CLUSTER } from '../inactive.ts';
import type { Manager } from '../manager/manager.ts';
import { newNodeRecord } from '../manager/nodes.ts';
import { planNewCluster } from '../new-cluster.ts';
import { chooseAdvertise, DEFAULT_LISTEN_PORT, formatHostPort, joinAdvertise, parseAddr } from '../node/addresses.ts';
import type { ControlMtu } from '../node/control-mtu.ts';
import { callManager, type JoinRequest, type JoinResponse } from '../node/endpoint.ts';
import type { LocalClusterState, LocalStateFiles } from '../node/local-state.ts';
import { checkAvailability } from '../node/node-helpers.ts';
import type { NodeRuntime } from '../node-runtime.ts';
import type { NodePhase } from './node-phase.ts';
import type { RoleRunner } from './role-runner.ts';

export const ALREADY_IN_A_CLUSTER =
  'This node is already part of a swarm. Use "docker swarm leave" to leave this swarm and join another one.';

export interface MembershipDeps {
  node: NodeRuntime;
  files: LocalStateFiles;
  phase: NodePhase;
  runner: RoleRunner;
  controlMtu: ControlMtu;
  /** --cluster-default-advertise-addr: an IP or interface name, used when init/join give no AdvertiseAddr. */
  defaultAdvertiseAddr?: () => string | undefined;
  /** The subnets of the daemon's own networks (left out when the system address is detected). */
  managedSubnets: () => string[];
  log: Logger;
}

export class Membership {
  constructor(private readonly d: MembershipDeps) {}

  async init(req: SwarmInitRequest): Promise<string> {
    const { files, phase, runner, log } = this.d;
    if (req.ForceNewCluster && phase.phase !== 'inactive') return this.forceNewCluster(req.Spec);
    if (phase.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
    const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
    const adv = await chooseAdvertise(listen, req.AdvertiseAddr, this.d.defaultAdvertiseAddr?.(), this.d.managedSubnets);
    const plan = await planNewCluster(req, listen, adv);
    const { state, certs } = plan;
    files.remove(); // what a failed attempt may have left
    if (plan.unlockKey) files.setUnlockKey(plan.unlockKey); // autolock from the start
    files.writeCerts(certs);
    files.write(state);
    let m: Manager | null = null;
    await runner.applyControlMtu(state); // before the first control connection (the MSS is set at SYN)
    const { nodeId, clusterId, advertiseAddr } = state;
    try {
      m = await runner.startManager(state, certs);
      const self = newNodeRecord(nodeId, 'manager', advertiseAddr, runner.describe(certs.caPem), plan.availability);
      await m.settings.bootstrap(plan.record, self);
      await m.serve();
    } catch (err) {
      await m?.stop().catch((e: Error) => log.warn('stopping the half-made cluster failed', { error: e.message }));
      files.remove();
      await this.d.controlMtu.remove();
      throw err;
    }
    await this.d.node.attachManager(m, certs);
    phase.activate();
    // dockerd makes the ingress network at init (its routing mesh is not built here).
    // The node's networking has it when init answers, as dockerd's: a client may remove it next.
    const networks = this.d.node.clusterNetworks();
    await networks
      ?.create({ Name: 'ingress', Driver: 'overlay', Ingress: true })
      .then(() => networks.refresh())
      .catch((err: Error) => log.warn('creating the ingress network failed', { error: err.message }));
    log.info('cluster initialised', { node: nodeId, cluster: clusterId, addr: advertiseAddr });
    return nodeId;
  }

  /**
   * `swarm init --force-new-cluster` on a manager (its quorum lost): its etcd member restarts with
   * etcd's --force-new-cluster (a one-member cluster keeping the data), and the other managers' node
   * records go, as dockerd drops them; workers, services and tasks stay. The addresses are kept; the
   * request's spec is merged in as dockerd does (its non-zero fields; autolock as given).
   */
  private async forceNewCluster(spec: ClusterObject | undefined): Promise<string> {
    const { files, phase, node } = this.d;
    if (phase.phase === 'locked') throw unavailable(LOCKED);
    const state = node.manager?.state ?? files.read();
    if (!state || state.role !== 'manager') throw unavailable(ALREADY_IN_A_CLUSTER);
    phase.phase = 'pending';
    await node.stopRole({ leaving: false });
    const next: LocalClusterState = { ...state, managers: [{ NodeID: state.nodeId, Addr: state.advertiseAddr }] };
    files.write(next);
    try {
      files.resetEtcdTrust();
      const certs = files.readCerts();
      const m = await this.d.runner.startManager(next, certs, { forceNewCluster: true });
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
      await node.attachManager(m, certs);
      phase.activate();
    } catch (err) {
      phase.fail(`cannot force a new cluster: ${(err as Error).message}`);
      throw err;
    }
    this.d.log.info('a new cluster forced from this manager (the other managers dropped)', { node: state.nodeId });
    return state.nodeId;
  }

  async join(req: SwarmJoinRequest): Promise<void> {
    const { files, phase, runner } = this.d;
    if (phase.phase !== 'inactive') throw unavailable(ALREADY_IN_A_CLUSTER);
    if (!req.RemoteAddrs?.length) throw invalidParameter('at least 1 RemoteAddr is required to join');
    const listen = parseAddr(req.ListenAddr || `0.0.0.0:${DEFAULT_LISTEN_PORT}`, DEFAULT_LISTEN_PORT, 'listen address');
    const adv = await joinAdvertise(listen, req.AdvertiseAddr, this.d.managedSubnets);
    if (req.Availability) checkAvailability(req.Availability);
    const remote = formatHostPort(parseAddr(req.RemoteAddrs[0]!, DEFAULT_LISTEN_PORT, 'remote address'));
    const { state, certs } = await admission(req, remote, listen, adv, (caPem) => runner.describe(caPem));
    files.remove();
    files.writeCerts(certs);
    files.write(state);
    try {
      await runner.run(state, state.role === 'manager' ? runner.promoter([{ NodeID: '', Addr: remote }], certs) : undefined);
    } catch (err) {
      files.remove();
      await this.d.controlMtu.remove();
      phase.phase = 'inactive';
      await callManager(remote, 'POST', '/leave', { abort: true }, { caPem: certs.caPem, certs }).catch((e: Error) =>
        this.d.log.warn('could not undo the join at the manager', { error: e.message }),
      );
      throw err;
    }
    this.d.log.info('joined the cluster', { node: state.nodeId, role: state.role, via: remote });
  }

  async leave(force: boolean): Promise<void> {
    const { node, phase } = this.d;
    if (phase.phase === 'inactive') throw unavailable(NOT_IN_A_CLUSTER);
    if (phase.phase === 'locked' && !force) throw unavailable(LOCKED); // as dockerd
    phase.lockedState = null;
    await node.manager?.nodes.leaveCluster(force); // refuses without force, as dockerd
    await node.stopRole({ leaving: true });
    await node.removeTasks();
    this.d.files.remove();
    await this.d.controlMtu.remove();
    phase.phase = 'inactive';
    phase.error = '';
    this.d.log.info('left the cluster');
  }
}

/**
 * A join's admission by the manager at `remote`: its CA checked against the token's digest, a new
 * key pair, the join request; the answer's certificate checked. The node's state and certificates.
 */
async function admission(
  req: SwarmJoinRequest,
  remote: string,
  listen: { host: string; port: number },
  adv: { host: string; port: number },
  describe: (caPem: string) => JoinRequest['description'],
): Promise<{ state: LocalClusterState; certs: { caPem: string; certPem: string; keyPem: string } }> {
  const token = req.JoinToken ?? '';
  const { caPem } = await callManager<{ caPem: string }>(remote, 'GET', '/ca', undefined, {});
  if (!tokenMatchesCa(token, caPem)) throw invalidParameter(`remote CA does not match fingerprint. Expected: ${caDigest(caPem)}`);
  const keys = newKeyPair();
  const body: JoinRequest = {
    token,
    publicKeyPem: keys.publicKeyPem,
    advertiseAddr: formatHostPort(adv),
    listenAddr: formatHostPort(listen),
    dataPathAddr: req.DataPathAddr ?? '',
    description: describe(caPem),
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
  return { state, certs: { caPem, certPem: res.certPem, keyPem: keys.keyPem } };
}
