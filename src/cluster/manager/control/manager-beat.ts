// A manager's own heartbeat: its lease refreshed each period, and what it checks then — its role
// in its record, the cluster's autolock KEK and record sealing, its TLS report, the end of a root
// rotation, the CA heartbeat answers name — and the managers to ask when its own store is gone.
import type { ClusterObject } from '../../../types/cluster.ts';
import type { Logger } from '../../../util/log.ts';
import { desiredIssuerKey, finishRotation } from '../../ca/ca-rotation.ts';
import { HEARTBEAT_PERIOD_NS, type ClusterRecord } from '../../ca/swarm-object.ts';
import type { LocalStateFiles, RemoteManager } from '../../node/local-state.ts';
import type { RecordMode } from '../../store/record-mode.ts';
import type { ClusterStore, Stored } from '../../store/store.ts';
import { CLUSTER_KEY, type ClusterSettings } from './cluster-settings.ts';
import { nodeKey, type NodeRegistry } from './node-registry.ts';
import type { NodeRecord } from '../nodes.ts';

/** What the node's service checks when a heartbeat finds a change (cluster/service.ts). */
export interface BeatChecks {
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
}

export interface ManagerBeatDeps {
  store: ClusterStore;
  nodes: NodeRegistry;
  settings: ClusterSettings;
  records: RecordMode;
  files: LocalStateFiles;
  checks: BeatChecks;
  selfId: string;
  /** The managers this node started with (its state file). */
  managers: RemoteManager[];
  log: Logger;
}

export class ManagerBeat {
  private timer: NodeJS.Timeout | null = null;
  /** The cluster's Dispatcher.HeartbeatPeriod, in seconds: this node's and the answers to others. */
  periodSeconds = HEARTBEAT_PERIOD_NS / 1e9;
  /** The cluster CA as heartbeat answers give it, from this manager's own beat (no read per heartbeat). */
  caView: { trustRoot: string; issuerKey: string } | null = null;
  /** The managers as last read from the store (asked when the store itself does not answer). */
  private lastManagers: RemoteManager[];

  constructor(private readonly d: ManagerBeatDeps) {
    this.lastManagers = d.managers;
  }

  /** The period the cluster record sets (1 s at least), before the beat starts. */
  usePeriodOf(rec: ClusterRecord): void {
    const period = (rec.Spec.Dispatcher as { HeartbeatPeriod?: number } | undefined)?.HeartbeatPeriod;
    if (typeof period === 'number' && period >= 1e9) this.periodSeconds = period / 1e9;
  }

  start(): void {
    this.timer = setInterval(() => void this.beat(), this.periodSeconds * 1000);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
  }

  /** A beat soon (this node's certificate or trust root changed: the change reported). */
  soon(): void {
    if (this.timer) setTimeout(() => void this.beat(), 100).unref();
  }

  /** The cluster record written here changed the CA heartbeat answers name. */
  caChanged(rec: ClusterRecord): void {
    this.caView = { trustRoot: rec.ca.certPem, issuerKey: desiredIssuerKey(rec) };
  }

  /** The other managers as last known (to ask when this member's store does not answer). */
  otherManagers(): RemoteManager[] {
    return this.lastManagers.filter((m) => m.NodeID !== this.d.selfId);
  }

  async beat(): Promise<void> {
    const { store, nodes, checks, selfId } = this.d;
    try {
      await nodes.touch(selfId, this.periodSeconds);
      const [self, managers] = await Promise.all([store.get<NodeRecord>(nodeKey(selfId)), nodes.managers()]);
      if (managers.length) this.lastManagers = managers;
      if (self?.value.Spec.Role === 'worker') checks.roleCheck?.();
      const c = await this.d.settings.get();
      this.caChanged(c.value);
      const lock = c.value.autolock?.kekId ?? null;
      if (lock !== this.d.files.kekId) checks.keyCheck?.(lock);
      await this.d.records.apply(c.value);
      const tls = checks.tlsInfo?.();
      if (self && tls) await nodes.recordTls(self, tls);
      // A rotation ended here tells this node of the new root itself.
      if (!(c.value.rotation && (await this.endRotation(c))))
        checks.caCheck?.({ trustRoot: c.value.ca.certPem, issuerKey: desiredIssuerKey(c.value) });
    } catch (err) {
      this.d.log.warn('manager heartbeat failed', { error: (err as Error).message });
      checks.roleCheck?.();
    }
  }

  /** Ends a root rotation once every node's certificate is of the new root (a compare-and-swap). */
  private async endRotation(c: Stored<ClusterRecord>): Promise<boolean> {
    const nodes = await this.d.nodes.records();
    const keys = nodes.map((n) => n.value.Description.TLSInfo?.CertIssuerPublicKey ?? '');
    const done = finishRotation(c.value, keys);
    if (!done) return false;
    return this.d.store.update(CLUSTER_KEY, done, c.version).then(
      () => {
        this.d.log.info('root CA rotation complete: every node holds a certificate of the new root; join tokens changed');
        this.caChanged(done);
        this.d.checks.caCheck?.(this.caView!);
        return true;
      },
      (err: Error) => {
        this.d.log.debug('root rotation end not written (the cluster changed meanwhile)', { error: err.message });
        return false;
      },
    );
  }
}
