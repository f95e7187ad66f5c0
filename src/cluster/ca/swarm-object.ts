// The cluster object (what GET /swarm shows) as it is kept in the store, its spec defaults as
// dockerd fills them, and the checks of a spec sent to init or update.
import { invalidParameter } from '../../errors.ts';
import type { Swarm, TLSInfo } from '../../types/api/index.ts';
import type { ClusterObject } from '../../types/cluster.ts';
import type { GoJson } from '../../types/go-nil.ts';
import { checkCaConfig, DEFAULT_NODE_CERT_EXPIRY_NS } from './ca-rotation.ts';
import type { ClusterRecord } from './cluster-record.ts';

export const HEARTBEAT_PERIOD_NS = 5_000_000_000;

export type { ClusterRecord };

const isObj = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Fills zero or absent fields with dockerd's defaults (its swarm init does the same). */
export function withDefaults(spec: ClusterObject | undefined): ClusterObject {
  const s = isObj(spec) ? structuredClone(spec) : {};
  const section = (name: string): Record<string, unknown> => {
    const v = s[name];
    if (v !== undefined && v !== null && !isObj(v)) throw invalidParameter(`invalid Spec.${name}: must be an object`);
    return (s[name] = isObj(v) ? v : {}) as Record<string, unknown>;
  };
  const def = (o: Record<string, unknown>, k: string, v: unknown) => {
    if (o[k] === undefined || o[k] === null || o[k] === 0) o[k] = v;
  };
  if (!s.Name) s.Name = 'default';
  if (!isObj(s.Labels)) s.Labels = {};
  def(section('Orchestration'), 'TaskHistoryRetentionLimit', 5);
  const raft = section('Raft');
  def(raft, 'SnapshotInterval', 10000);
  def(raft, 'KeepOldSnapshots', 0);
  def(raft, 'LogEntriesForSlowFollowers', 500);
  def(raft, 'ElectionTick', 10);
  def(raft, 'HeartbeatTick', 1);
  def(section('Dispatcher'), 'HeartbeatPeriod', HEARTBEAT_PERIOD_NS);
  def(section('CAConfig'), 'NodeCertExpiry', DEFAULT_NODE_CERT_EXPIRY_NS);
  section('TaskDefaults');
  const enc = section('EncryptionConfig');
  if (enc.AutoLockManagers === undefined) enc.AutoLockManagers = false;
  return s;
}

/** Checks a spec the engine can honour; what it cannot yet is a 501, not silently ignored. */
export function checkSpec(spec: ClusterObject): void {
  const enc = spec.EncryptionConfig as Record<string, unknown> | undefined;
  if (enc?.AutoLockManagers !== undefined && typeof enc.AutoLockManagers !== 'boolean')
    throw invalidParameter('invalid EncryptionConfig.AutoLockManagers: must be a boolean');
  checkCaConfig(spec);
  const period = (spec.Dispatcher as Record<string, unknown> | undefined)?.HeartbeatPeriod;
  if (typeof period !== 'number' || period < 1_000_000_000)
    throw invalidParameter('invalid Dispatcher.HeartbeatPeriod: at least 1s is required');
}

/** The API's Swarm; its Spec is the stored one (withDefaults), not retyped. */
export type SwarmView = Omit<NonNullable<GoJson<Swarm>>, 'Spec'> & { Spec: ClusterObject };

/** GET /swarm's answer (the `Cluster` of /info without JoinTokens). */
export function clusterView(rec: ClusterRecord, version: number, tls: GoJson<TLSInfo>, withTokens: boolean): SwarmView {
  const view: SwarmView = {
    ID: rec.ID,
    Version: { Index: version },
    CreatedAt: rec.CreatedAt,
    UpdatedAt: rec.UpdatedAt,
    Spec: rec.Spec,
    TLSInfo: tls,
    RootRotationInProgress: !!rec.rotation,
    DefaultAddrPool: rec.DefaultAddrPool,
    SubnetSize: rec.SubnetSize,
    DataPathPort: rec.DataPathPort,
  };
  if (withTokens) view.JoinTokens = rec.JoinTokens;
  return view;
}

const zero = (v: unknown) =>
  v === undefined || v === null || v === 0 || v === '' || (Array.isArray(v) && v.length === 0) || (isObj(v) && Object.keys(v).length === 0);

/**
 * dockerd's merge of an init request's spec into a cluster that exists (`--force-new-cluster`,
 * MergeSwarmSpecToGRPC): each non-zero field of the request replaces the current one, and
 * EncryptionConfig.AutoLockManagers is taken as the request gives it (absent: off).
 */
export function mergeInitSpec(current: ClusterObject, req: ClusterObject | undefined): ClusterObject {
  const out = structuredClone(current);
  const r = isObj(req) ? req : {};
  for (const [k, v] of Object.entries(r)) {
    if (k === 'EncryptionConfig' || zero(v)) continue;
    const cur = out[k];
    if (isObj(v) && isObj(cur)) {
      for (const [kk, vv] of Object.entries(v)) if (!zero(vv)) cur[kk] = vv;
    } else out[k] = v;
  }
  const enc = isObj(r.EncryptionConfig) ? r.EncryptionConfig : {};
  out.EncryptionConfig = { ...(isObj(out.EncryptionConfig) ? out.EncryptionConfig : {}), AutoLockManagers: enc.AutoLockManagers === true };
  return out;
}
