// What `swarm init` makes before anything runs: the node's and the cluster's IDs, the root CA and
// the node's manager certificate, the node's saved state (a one-member etcd cluster), and the
// cluster record with its join tokens and data key — sealed with a new unlock key when the spec
// asks for autolock. Nothing is written here: ClusterService saves and starts it.
import { kekOf, newUnlockKey, sealClusterKeys } from './ca/autolock.ts';
import { issueNodeCert, newKeyPair } from './ca/ca.ts';
import { initialRoot, lifetimeOf, storedSpec } from './ca/ca-rotation.ts';
import { newDataKey } from './ca/secret-crypto.ts';
import { checkSpec, withDefaults, type ClusterRecord } from './ca/swarm-object.ts';
import { newJoinToken } from './ca/tokens.ts';
import { newId } from './ids.ts';
import { checkInitNetworking } from './init-request.ts';
import { certificateIps, formatHostPort, type HostPort } from './node/addresses.ts';
import type { LocalClusterState, NodeCerts } from './node/local-state.ts';
import { checkAvailability } from './node/node-helpers.ts';
import { etcdPorts, peerUrl } from './store/etcd-process.ts';
import type { SwarmInitRequest } from '../types/cluster.ts';

export interface NewCluster {
  state: LocalClusterState;
  certs: NodeCerts;
  record: ClusterRecord;
  /** The node's availability as the request gives it (checked). */
  availability: string;
  /** Autolock from the start: the key the node's key is sealed with (the record's keys are sealed). */
  unlockKey?: Buffer;
}

/** The request checked (spec, networking, availability) and everything a new cluster starts from. */
export async function planNewCluster(req: SwarmInitRequest, listen: HostPort, adv: HostPort): Promise<NewCluster> {
  const spec = withDefaults(req.Spec);
  checkSpec(spec);
  const net = checkInitNetworking(req);
  const availability = checkAvailability(req.Availability || 'active');
  const nodeId = newId();
  const clusterId = newId();
  const ca = await initialRoot(spec);
  const keys = newKeyPair();
  const certPem = await issueNodeCert(ca, keys.publicKeyPem, {
    nodeId,
    role: 'manager',
    clusterId,
    ips: certificateIps(adv.host, listen.host),
    lifetimeMs: lifetimeOf(spec),
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
  let record: ClusterRecord = {
    ID: clusterId,
    CreatedAt: now,
    UpdatedAt: now,
    Spec: storedSpec(spec),
    lastForcedRotation: (spec.CAConfig as { ForceRotate?: number }).ForceRotate ?? 0,
    ...net,
    JoinTokens: { Worker: newJoinToken(ca.certPem), Manager: newJoinToken(ca.certPem) },
    ca,
    dataKey: newDataKey(),
  };
  let unlockKey: Buffer | undefined;
  if ((spec.EncryptionConfig as { AutoLockManagers?: boolean }).AutoLockManagers === true) {
    unlockKey = newUnlockKey();
    record = sealClusterKeys(record, { ca, dataKey: record.dataKey! }, kekOf(unlockKey));
  }
  const certs = { caPem: ca.certPem, certPem, keyPem: keys.keyPem };
  return { state, certs, record, availability, ...(unlockKey ? { unlockKey } : {}) };
}
