// A real one-member etcd for the cluster unit tests: a fresh cluster CA and manager certificate,
// EtcdMember on free loopback ports over mutual TLS, and stores opened on it.
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRootCa, issueNodeCert, newKeyPair } from '../../src/cluster/ca/ca.ts';
import { EtcdMember, peerUrl } from '../../src/cluster/store/etcd-process.ts';
import { newId } from '../../src/cluster/ids.ts';
import { ClusterStore } from '../../src/cluster/store/store.ts';
import { Logger } from '../../src/util/log.ts';
import { freePort } from './ports.ts';

export interface TestEtcd {
  /** The temp dir holding certificates and etcd's data (the caller removes it). */
  dir: string;
  member: EtcdMember;
  /** A new client of the member, with the manager certificate. */
  openStore(): Promise<ClusterStore>;
}

export async function startTestEtcd(log = new Logger({ level: 'error', format: 'text', raw: false })): Promise<TestEtcd> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-etcd-'));
  const ca = await createRootCa();
  const keys = newKeyPair();
  const nodeId = newId();
  const cert = await issueNodeCert(ca, keys.publicKeyPem, { nodeId, role: 'manager', clusterId: newId(), ips: ['127.0.0.1'] });
  const tls = { caFile: join(dir, 'ca.pem'), certFile: join(dir, 'node.pem'), keyFile: join(dir, 'node.key') };
  await writeFile(tls.caFile, ca.certPem);
  await writeFile(tls.certFile, cert);
  await writeFile(tls.keyFile, keys.keyPem, { mode: 0o600 });
  const [clientPort, peerPort] = [await freePort(), await freePort()];
  const member = new EtcdMember({
    name: nodeId,
    dataDir: join(dir, 'etcd'),
    host: '127.0.0.1',
    clientPort,
    peerPort,
    tls,
    initialCluster: `${nodeId}=${peerUrl('127.0.0.1', peerPort)}`,
    initialState: 'new',
    clusterToken: newId(),
    log,
  });
  await member.start();
  return {
    dir,
    member,
    openStore: () => ClusterStore.open([member.endpoint], { caPem: ca.certPem, certPem: cert, keyPem: keys.keyPem }),
  };
}
