// What a node keeps on its own disk about its cluster, so a restarted daemon comes back in it:
// <data-root>/cluster/state.json (node ID, role, cluster ID, addresses, the managers it knows) and
// <data-root>/cluster/certificates/ (ca.pem, node.pem, node.key). A manager's etcd data lives in
// <data-root>/cluster/etcd. Leaving the cluster removes the whole directory.
import fs from 'node:fs';
import path from 'node:path';
import type { NodeRole } from './ca.ts';

export interface LocalClusterState {
  nodeId: string;
  clusterId: string;
  role: NodeRole;
  /** host:port of the manager endpoint this node listens on (managers). */
  listenAddr: string;
  /** host:port other nodes reach this node at. */
  advertiseAddr: string;
  dataPathAddr: string;
  /** The managers this node knows (for workers: where to heartbeat), with their endpoint's host:port. */
  managers: RemoteManager[];
  /** A manager's etcd: the member cluster it first started with (ignored once its data exists). */
  etcd?: { initialCluster: string; initialState: 'new' | 'existing'; clusterToken: string };
}

export interface RemoteManager {
  NodeID: string;
  Addr: string;
}

export interface NodeCerts {
  caPem: string;
  certPem: string;
  keyPem: string;
}

export class LocalStateFiles {
  readonly dir: string;
  readonly certDir: string;
  readonly etcdDir: string;
  private readonly file: string;

  constructor(dataRoot: string) {
    this.dir = path.join(dataRoot, 'cluster');
    this.certDir = path.join(this.dir, 'certificates');
    this.etcdDir = path.join(this.dir, 'etcd');
    this.file = path.join(this.dir, 'state.json');
  }

  get tlsFiles(): { caFile: string; certFile: string; keyFile: string } {
    return {
      caFile: path.join(this.certDir, 'ca.pem'),
      certFile: path.join(this.certDir, 'node.pem'),
      keyFile: path.join(this.certDir, 'node.key'),
    };
  }

  /** The saved state, or null when the node is in no cluster. A corrupt file is an error, not "no cluster". */
  read(): LocalClusterState | null {
    let text: string;
    try {
      text = fs.readFileSync(this.file, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
      throw err;
    }
    return JSON.parse(text) as LocalClusterState;
  }

  readCerts(): NodeCerts {
    const t = this.tlsFiles;
    return {
      caPem: fs.readFileSync(t.caFile, 'utf8'),
      certPem: fs.readFileSync(t.certFile, 'utf8'),
      keyPem: fs.readFileSync(t.keyFile, 'utf8'),
    };
  }

  writeCerts(c: NodeCerts): void {
    fs.mkdirSync(this.certDir, { recursive: true, mode: 0o700 });
    const t = this.tlsFiles;
    fs.writeFileSync(t.caFile, c.caPem);
    fs.writeFileSync(t.certFile, c.certPem);
    fs.writeFileSync(t.keyFile, c.keyPem, { mode: 0o600 });
  }

  /** Written to a temporary file and renamed, so a crash leaves the old or the new state. */
  write(s: LocalClusterState): void {
    fs.mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.tmp`;
    fs.writeFileSync(tmp, JSON.stringify(s, null, 2), { mode: 0o600 });
    fs.renameSync(tmp, this.file);
  }

  /** A manager's etcd data (a node that changes role starts without any). */
  removeEtcd(): void {
    fs.rmSync(this.etcdDir, { recursive: true, force: true });
  }

  /** Forgets the cluster: state, certificates and etcd data. */
  remove(): void {
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
