// The cluster record as a manager reads and changes it: the swarm object's view, `swarm init`'s
// first write, `swarm update` (spec, join tokens, CA rotation, autolock on/off and key rotation)
// and the unlock key it hands to the API and to other managers.
import { forbidden, notFound, notImplemented, unavailable } from '../../../errors.ts';
import type { ClusterObject, SwarmUpdateOptions } from '../../../types/cluster.ts';
import type { Logger } from '../../../util/log.ts';
import { formatUnlockKey, kekOf, newUnlockKey, openClusterKeys, sealClusterKeys } from '../../ca/autolock.ts';
import { tlsInfoOf, type CertIdentity } from '../../ca/ca.ts';
import { caUpdate, storedSpec } from '../../ca/ca-rotation.ts';
import { newDataKey } from '../../ca/secret-crypto.ts';
import { checkSpec, clusterView, withDefaults, type ClusterRecord, type SwarmView } from '../../ca/swarm-object.ts';
import { newJoinToken } from '../../ca/tokens.ts';
import type { LocalStateFiles } from '../../node/local-state.ts';
import type { RecordMode } from '../../store/record-mode.ts';
import type { ClusterStore, Stored } from '../../store/store.ts';
import { nodeKey } from './node-registry.ts';
import type { NodeRecord } from '../nodes.ts';

export const CLUSTER_KEY = 'cluster';

export class ClusterSettings {
  constructor(
    private readonly store: ClusterStore,
    /** The unlock key and its KEK this node holds (autolock). */
    private readonly files: LocalStateFiles,
    /** Records sealed at rest while autolocked. */
    private readonly records: RecordMode,
    /** The record written by an update: the CA the heartbeat answers name follows it. */
    private readonly written: (rec: ClusterRecord) => void,
    private readonly log: Logger,
  ) {}

  async get(): Promise<Stored<ClusterRecord>> {
    const c = await this.store.get<ClusterRecord>(CLUSTER_KEY);
    if (!c) throw unavailable('the cluster store holds no cluster object');
    return c;
  }

  async inspect(withTokens = true): Promise<SwarmView> {
    const c = await this.get();
    return clusterView(c.value, c.version, tlsInfoOf(c.value.ca.certPem), withTokens);
  }

  /** Writes the cluster object and this node at `swarm init`. */
  async bootstrap(rec: ClusterRecord, node: NodeRecord): Promise<void> {
    await this.records.apply(rec); // autolock from the start: the node record is sealed already
    // Together: etcd commits concurrent writes in one round (one disk sync instead of two).
    await Promise.all([this.store.create(CLUSTER_KEY, rec), this.store.create(nodeKey(node.ID), node)]);
  }

  /**
   * Autolock turned on (or its key rotated): a new unlock key, the record's CA and data keys sealed
   * with its KEK, this node's key on disk too; off: all in the clear again. The other managers see
   * the record's KEK change at their next heartbeat and fetch the key from a manager that holds it.
   */
  async update(spec: ClusterObject, opts: SwarmUpdateOptions): Promise<void> {
    const c = await this.get();
    const next = withDefaults(spec);
    checkSpec(next);
    const lock = (next.EncryptionConfig as { AutoLockManagers?: boolean }).AutoLockManagers === true;
    if (lock && !c.value.autolock && c.value.rotation)
      throw notImplemented('turning autolock on during a root CA rotation is not built yet in this engine; wait until it ends');
    const caFields = await caUpdate(c.value, next, openClusterKeys(c.value, this.files.kek).ca);
    let rec: ClusterRecord = { ...c.value, Spec: storedSpec(next), UpdatedAt: new Date().toISOString(), ...caFields };
    if (caFields && !caFields.rotation) delete rec.rotation;
    if (opts.rotateWorkerToken) rec.JoinTokens = { ...rec.JoinTokens, Worker: newJoinToken(rec.ca.certPem) };
    if (opts.rotateManagerToken) rec.JoinTokens = { ...rec.JoinTokens, Manager: newJoinToken(rec.ca.certPem) };
    let unlockKey: Buffer | null | undefined; // undefined: unchanged
    if (lock && (!c.value.autolock || opts.rotateManagerUnlockKey)) unlockKey = newUnlockKey();
    else if (!lock && c.value.autolock) unlockKey = null;
    if (unlockKey !== undefined) {
      const keys = openClusterKeys(c.value, this.files.kek);
      rec = sealClusterKeys(rec, { ca: keys.ca, dataKey: keys.dataKey ?? newDataKey() }, unlockKey && kekOf(unlockKey));
    }
    await this.store.update(CLUSTER_KEY, rec, opts.version);
    this.written(rec);
    if (caFields?.rotation && caFields.rotation !== c.value.rotation) this.log.info('root CA rotation started');
    if (unlockKey !== undefined) {
      this.files.rekey(unlockKey);
      this.log.info(unlockKey ? 'autolock: a new unlock key seals the cluster keys' : 'autolock turned off');
      // Switched on or off: the records are rewritten sealed or in the clear before the answer.
      await this.records.apply(rec);
    }
  }

  /** GET /swarm/unlockkey: the key while autolock is on (empty when off). */
  async unlockKeyView(): Promise<{ UnlockKey: string }> {
    const c = await this.get();
    if (!c.value.autolock) return { UnlockKey: '' };
    const key = this.files.unlockKey;
    if (!key || this.files.kekId !== c.value.autolock.kekId)
      throw unavailable('this manager does not hold the current unlock key yet; try again shortly');
    return { UnlockKey: formatUnlockKey(key) };
  }

  /** The endpoint's /unlock-key: another manager (only) fetches the key this one holds. */
  async unlockKey(node: CertIdentity): Promise<{ UnlockKey: string }> {
    // The certificate's role and the record's: a demoted manager's old certificate is not enough.
    const rec = await this.store.get<NodeRecord>(nodeKey(node.nodeId));
    if (node.role !== 'manager' || rec?.value.Spec.Role !== 'manager') throw forbidden('only managers may fetch the unlock key');
    const key = this.files.unlockKey;
    if (!key) throw notFound('this manager holds no unlock key');
    return { UnlockKey: formatUnlockKey(key) };
  }
}
