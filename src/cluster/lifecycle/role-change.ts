// A node's role as its cluster decides it: a manager whose record says worker (or whose store went
// with its demotion) asks another manager; a heartbeat answer with another role turns the node into
// it (old runtime stopped, certificate saved, new runtime started); and a manager follows the
// cluster's autolock key when it changes elsewhere.
import type { Logger } from '../../util/log.ts';
import { issuerInChain, identityOf } from '../ca/ca.ts';
import type { HeartbeatResponse } from '../node/endpoint.ts';
import type { LocalClusterState, LocalStateFiles } from '../node/local-state.ts';
import { certFitsKey, holdUnlockKey } from '../node/node-helpers.ts';
import type { NodeRuntime } from '../node-runtime.ts';
import type { NodePhase } from './node-phase.ts';
import type { RoleRunner } from './role-runner.ts';

export interface RoleChangesDeps {
  node: NodeRuntime;
  files: LocalStateFiles;
  phase: NodePhase;
  runner: RoleRunner;
  log: Logger;
}

export class RoleChanges {
  private roleChecking = false;
  private keySyncing = false;

  constructor(private readonly d: RoleChangesDeps) {}

  /**
   * The cluster record's autolock key changed (turned on, rotated, off) on another manager: off, the
   * node key goes back in the clear; else the key is fetched from a manager that holds it (matching
   * the record's KEK) and the node key is sealed with it. One sync at a time.
   */
  syncUnlockKey(want: string | null): void {
    const { files, log } = this.d;
    const m = this.d.node.manager;
    if (!m || this.keySyncing || this.d.phase.phase !== 'active') return;
    this.keySyncing = true;
    void (async () => {
      if (want === null) {
        files.rekey(null);
        log.info('autolock is off: the node key is kept in the clear');
      } else if (!(await holdUnlockKey(files, m.otherManagers(), want, log))) return;
      await m.keysChanged(); // the records' data key may open now
    })()
      .catch((err: Error) => log.warn('autolock key sync failed', { error: err.message }))
      .finally(() => (this.keySyncing = false));
  }

  /**
   * A manager whose record says worker, or whose store does not answer: another manager's heartbeat
   * answer tells whether it was demoted (with its worker certificate). One check at a time.
   */
  checkRole(): void {
    const m = this.d.node.manager;
    if (!m || this.roleChecking || this.d.phase.phase !== 'active') return;
    this.roleChecking = true;
    void this.d.runner
      .askRole(m.state, m.otherManagers())
      .then((r) => (r?.role === 'worker' ? this.switchRole(r) : undefined))
      .catch((err: Error) => this.d.log.warn('role check failed', { error: err.message }))
      .finally(() => (this.roleChecking = false));
  }

  /**
   * Turns the node into the role a heartbeat answer gives (a promotion or demotion): the runtime of
   * the old role stops (its etcd data goes), the certificate for the new one is saved, and the node
   * runs as the new role; its task containers keep running and the new agent adopts them.
   */
  switchRole(r: HeartbeatResponse): Promise<void> {
    return this.d.phase.serial(async () => {
      const cur = this.d.node.state;
      if (cur && this.d.phase.phase === 'active') await this.becomeRole(cur, r);
    });
  }

  async becomeRole(cur: LocalClusterState, r: HeartbeatResponse): Promise<void> {
    const { files, log, phase } = this.d;
    if (!r.role || r.role === cur.role || !r.certPem) return;
    if (r.role === 'manager' && !r.etcd) return;
    const certs = files.readCerts();
    const id = identityOf(r.certPem);
    if (!issuerInChain(r.certPem, certs.caPem) || id.nodeId !== cur.nodeId || id.role !== r.role) {
      log.warn('a heartbeat answer carried a certificate that is not for this node and role; ignored');
      return;
    }
    // Renewed (a new key) since the heartbeat that brought it: the next answer carries one for the new key.
    if (!certFitsKey(r.certPem, certs.keyPem)) return;
    log.info('the node changes its role', { node: cur.nodeId, from: cur.role, to: r.role });
    phase.phase = 'pending';
    await this.d.node.stopRole({ leaving: false });
    files.removeEtcd();
    if (r.role === 'worker') files.setUnlockKey(null); // autolock seals managers' keys only
    const next: LocalClusterState = { ...cur, role: r.role, managers: r.managers.filter((m) => m.NodeID !== cur.nodeId) };
    delete next.etcd;
    if (r.role === 'manager')
      next.etcd = { initialCluster: r.etcd!.initialCluster, initialState: 'existing', clusterToken: r.etcd!.clusterToken };
    const nextCerts = { ...certs, certPem: r.certPem };
    files.writeCerts(nextCerts);
    files.write(next);
    const { runner } = this.d;
    try {
      await runner.run(next, r.role === 'manager' ? runner.promoter(next.managers, nextCerts) : undefined);
      log.info('the node runs in its new role', { node: cur.nodeId, role: r.role });
    } catch (err) {
      phase.fail(`cannot run as a ${r.role} after the role change: ${(err as Error).message}`);
    }
  }
}
