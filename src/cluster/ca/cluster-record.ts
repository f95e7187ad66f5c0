// The cluster record in the store, as the manager, CA rotation and autolock read and write it (its
// API view and spec defaults are swarm-object.ts's).
import type { ClusterObject } from '../../types/cluster.ts';

/** The stored record: the API's fields plus the CA key (managers only ever read it). */
export interface ClusterRecord {
  ID: string;
  CreatedAt: string;
  UpdatedAt: string;
  Spec: ClusterObject;
  DataPathPort: number;
  DefaultAddrPool: string[];
  SubnetSize: number;
  JoinTokens: { Worker: string; Manager: string };
  ca: { certPem: string; keyPem: string };
  /** A root rotation in progress (ca-rotation.ts): the new root, its key, and it cross-signed by `ca`. */
  rotation?: { certPem: string; keyPem: string; crossPem: string };
  /** Spec.CAConfig.ForceRotate of the last rotation (a different one starts a new rotation). */
  lastForcedRotation?: number;
  /** Cross-signed roots of past rotations, sent after every leaf (newest first). */
  chain?: string[];
  /** The key (base64) that seals secret and config data (secret-crypto.ts); made on first use. */
  dataKey?: string;
  /** With autolock: the CA key (ca.keyPem is then empty) and the data key sealed (autolock.ts). */
  autolock?: { kekId: string; caKey: string; dataKey: string };
}
