// What a node keeps on its own disk about its cluster, so a restarted daemon comes back in it:
// <data-root>/cluster/state.json (node ID, role, cluster ID, addresses, the managers it knows) and
// <data-root>/cluster/certificates/ (ca.pem, node.pem, node.key). A manager's etcd data lives in
// <data-root>/cluster/etcd. Leaving the cluster removes the whole directory.
// With autolock, a manager's node.key is sealed with the KEK of the unlock key (autolock.ts): it opens
// only once the key is given (`swarm unlock`). etcd reads files only: it is given the key in the clear
// in <exec-root>/cluster/node.key (0600; the exec-root is a tmpfs on a host), removed at shutdown.
import fs from 'node:fs';
import path from 'node:path';
import { unavailable } from '../../errors.ts';
import { kekId, kekOf, LOCKED, openWith, sealWith } from '../ca/autolock.ts';
import type { NodeRole } from '../ca/ca.ts';

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
  private readonly runKey: string;
  /** The unlock key this node holds (autolock), and its KEK. */
  private unlock: { key: Buffer; kek: string } | null = null;

  constructor(dataRoot: string, execRoot?: string) {
    this.dir = path.join(dataRoot, 'cluster');
    this.certDir = path.join(this.dir, 'certificates');
    this.etcdDir = path.join(this.dir, 'etcd');
    this.file = path.join(this.dir, 'state.json');
    this.runKey = path.join(execRoot ?? path.join(this.dir, 'run'), execRoot ? 'cluster' : '', 'node.key');
  }

  get tlsFiles(): { caFile: string; certFile: string; keyFile: string } {
    return {
      // Every root this node trusted since its daemon started (etcd loads its trust at start only:
      // its peers' and its store client's certificates of an earlier root must still pass if it restarts).
      caFile: path.join(this.certDir, 'etcd-ca.pem'),
      certFile: path.join(this.certDir, 'node.pem'),
      // etcd's key file: the node key in the clear, written whenever the key is read or written.
      keyFile: this.runKey,
    };
  }

  get unlockKey(): Buffer | null {
    return this.unlock?.key ?? null;
  }

  get kek(): string | null {
    return this.unlock?.kek ?? null;
  }

  /** The ID of the KEK held (null: none), compared with the cluster record's. */
  get kekId(): string | null {
    return this.unlock ? kekId(this.unlock.kek) : null;
  }

  /** Whether the node key on disk is sealed (the node restarts locked). */
  keySealed(): boolean {
    try {
      return !fs.readFileSync(path.join(this.certDir, 'node.key'), 'utf8').startsWith('-----');
    } catch {
      // ENOENT (no key yet) or unreadable: not sealed
      return false;
    }
  }

  /** Whether `key` opens the sealed node key. */
  opens(key: Buffer): boolean {
    try {
      openWith(kekOf(key), 'node-key', fs.readFileSync(path.join(this.certDir, 'node.key'), 'utf8'));
      return true;
    } catch {
      // a wrong key fails to decrypt: that is the answer
      return false;
    }
  }

  /** Holds `key` (null: none) without touching the disk. */
  setUnlockKey(key: Buffer | null): void {
    this.unlock = key ? { key, kek: kekOf(key) } : null;
  }

  /** Holds `key` and seals the node key on disk with it (null: writes it in the clear). */
  rekey(key: Buffer | null): void {
    const certs = this.readCerts();
    this.setUnlockKey(key);
    this.writeCerts(certs);
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

  /** The certificates; a sealed node key is opened with the key held (503 `LOCKED` without one). */
  readCerts(): NodeCerts {
    const t = this.tlsFiles;
    let keyPem = fs.readFileSync(path.join(this.certDir, 'node.key'), 'utf8');
    if (!keyPem.startsWith('-----')) {
      if (!this.unlock) throw unavailable(LOCKED);
      keyPem = openWith(this.unlock.kek, 'node-key', keyPem);
    }
    this.writeRunKey(keyPem);
    return { caPem: fs.readFileSync(t.caFile, 'utf8'), certPem: fs.readFileSync(t.certFile, 'utf8'), keyPem };
  }

  /** Writes the certificates; the node key sealed when an unlock key is held. */
  writeCerts(c: NodeCerts): void {
    fs.mkdirSync(this.certDir, { recursive: true, mode: 0o700 });
    // Each file replaced whole (written beside, then renamed): a reader, or a kill -9, never finds
    // one half-written.
    const put = (name: string, data: string, mode = 0o644) => {
      const tmp = path.join(this.certDir, `${name}.tmp`);
      fs.writeFileSync(tmp, data, { mode });
      fs.renameSync(tmp, path.join(this.certDir, name));
    };
    put('ca.pem', c.caPem);
    const etcdCa = path.join(this.certDir, 'etcd-ca.pem');
    const trusted = fs.existsSync(etcdCa) ? fs.readFileSync(etcdCa, 'utf8') : '';
    if (!trusted.includes(c.caPem.trim())) put('etcd-ca.pem', trusted + c.caPem);
    put('node.pem', c.certPem);
    put('node.key', this.unlock ? sealWith(this.unlock.kek, 'node-key', c.keyPem) : c.keyPem, 0o600);
    this.writeRunKey(c.keyPem);
  }

  /** etcd's trust back to the current root alone (a daemon start: nothing older is in use). */
  resetEtcdTrust(): void {
    fs.copyFileSync(path.join(this.certDir, 'ca.pem'), path.join(this.certDir, 'etcd-ca.pem'));
  }

  /** Removes the key in the clear (shutdown, or a node found locked: what a reboot's tmpfs would do). */
  dropRunKey(): void {
    fs.rmSync(this.runKey, { force: true });
  }

  private writeRunKey(keyPem: string): void {
    fs.mkdirSync(path.dirname(this.runKey), { recursive: true, mode: 0o700 });
    fs.writeFileSync(this.runKey, keyPem, { mode: 0o600 });
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
    this.unlock = null;
    fs.rmSync(this.runKey, { force: true });
    fs.rmSync(this.dir, { recursive: true, force: true });
  }
}
