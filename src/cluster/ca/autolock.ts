// Autolock: the unlock key in swarmkit's format (`SWMKEY-1-` + unpadded base64 of 32 random bytes),
// the key-encryption key (KEK) derived from it (HKDF-SHA256) and what it seals: in the cluster record
// the CA key and the data key (a manager that holds the key opens them in memory), on a manager's
// disk its node key (so a restarted manager is locked until `swarm unlock`). Sealing is
// secret-crypto's AES-256-GCM with the value's name as associated data. Pure.
import { createHash, hkdfSync, randomBytes } from 'node:crypto';
import { invalidParameter, unavailable } from '../../errors.ts';
import type { RootCa } from './ca.ts';
import { open, seal } from './secret-crypto.ts';
import type { ClusterRecord } from './cluster-record.ts';

const PREFIX = 'SWMKEY-1-';

/** dockerd's answer to a request that needs the cluster while the manager is locked. */
export const LOCKED = 'Swarm is encrypted and needs to be unlocked before it can be used. Please use "docker swarm unlock" to unlock it.';
const NOT_HELD = "the cluster's keys are sealed with an unlock key this manager does not hold yet; try again shortly";

export function newUnlockKey(): Buffer {
  return randomBytes(32);
}

export function formatUnlockKey(key: Buffer): string {
  return PREFIX + key.toString('base64').replace(/=+$/, '');
}

/** swarmkit's ParseHumanReadableKey: the prefix and base64; a wrong key is found when it opens nothing. */
export function parseUnlockKey(text: string): Buffer {
  const b64 = text.trim().startsWith(PREFIX) ? text.trim().slice(PREFIX.length) : null;
  if (b64 === null || !/^[A-Za-z0-9+/]+$/.test(b64)) throw invalidParameter('invalid key string');
  return Buffer.from(b64, 'base64');
}

/** The KEK of an unlock key, base64 (as secret-crypto takes keys). */
export function kekOf(key: Buffer): string {
  return Buffer.from(hkdfSync('sha256', key, Buffer.alloc(0), 'engine cluster autolock', 32)).toString('base64');
}

/** A short public name of a KEK, kept beside what it sealed (which key is current). */
export function kekId(kek: string): string {
  return createHash('sha256').update(`kek-id:${kek}`).digest('hex').slice(0, 16);
}

export const sealWith = (kek: string, what: string, plain: string): string => seal(kek, what, Buffer.from(plain));
export const openWith = (kek: string, what: string, sealed: string): string => open(kek, what, sealed).toString();

export interface ClusterKeys {
  ca: RootCa;
  dataKey?: string;
}

/** The CA and data keys of a cluster record, opened with `kek` when autolock sealed them. */
export function openClusterKeys(rec: ClusterRecord, kek: string | null): ClusterKeys {
  if (!rec.autolock) return { ca: rec.ca, ...(rec.dataKey ? { dataKey: rec.dataKey } : {}) };
  if (!kek || kekId(kek) !== rec.autolock.kekId) throw unavailable(NOT_HELD);
  return {
    ca: { certPem: rec.ca.certPem, keyPem: openWith(kek, 'ca-key', rec.autolock.caKey) },
    dataKey: openWith(kek, 'data-key', rec.autolock.dataKey),
  };
}

/** The record with its keys in the clear (`kek` null: autolock off) or sealed with `kek`. */
export function sealClusterKeys(rec: ClusterRecord, keys: Required<ClusterKeys>, kek: string | null): ClusterRecord {
  const { autolock: _old, dataKey: _plain, ...rest } = rec;
  if (!kek) return { ...rest, ca: keys.ca, dataKey: keys.dataKey };
  return {
    ...rest,
    ca: { certPem: keys.ca.certPem, keyPem: '' },
    autolock: { kekId: kekId(kek), caKey: sealWith(kek, 'ca-key', keys.ca.keyPem), dataKey: sealWith(kek, 'data-key', keys.dataKey) },
  };
}
