// Wire types of the cluster (swarm) API: /swarm, /nodes, /services, /tasks, /secrets, /configs.
// Objects are kept as open records where the engine only passes them through.

/** The five object families a cluster manager holds. */
export type ClusterObjectKind = 'nodes' | 'services' | 'tasks' | 'secrets' | 'configs';
/** Families a user creates (nodes join, tasks are made by the orchestrator). */
export type CreatableKind = 'services' | 'secrets' | 'configs';
/** Families a user updates or removes. */
export type MutableKind = 'nodes' | 'services' | 'secrets' | 'configs';

export type ClusterObject = Record<string, unknown>;

export interface SwarmInitRequest {
  ListenAddr?: string;
  AdvertiseAddr?: string;
  DataPathAddr?: string;
  DataPathPort?: number;
  DefaultAddrPool?: string[];
  SubnetSize?: number;
  ForceNewCluster?: boolean;
  Spec?: ClusterObject;
  /** The first node's availability: active, pause or drain. */
  Availability?: string;
}

export interface SwarmJoinRequest {
  ListenAddr?: string;
  AdvertiseAddr?: string;
  DataPathAddr?: string;
  RemoteAddrs?: string[];
  JoinToken?: string;
  /** The joining node's availability: active, pause or drain. */
  Availability?: string;
}

export interface SwarmUpdateOptions {
  version: number;
  rotateWorkerToken: boolean;
  rotateManagerToken: boolean;
  rotateManagerUnlockKey: boolean;
}

export interface ObjectUpdateOptions {
  version: number;
  /** X-Registry-Auth of a service update, as sent. */
  registryAuth?: string;
  registryAuthFrom?: string;
  rollback?: string;
  /** Pin the image to a digest at the daemon (dockerd: API < 1.30 only). */
  queryRegistry?: boolean;
}

export interface ClusterLogOptions {
  follow: boolean;
  stdout: boolean;
  stderr: boolean;
  since?: string;
  timestamps: boolean;
  tail?: string;
  details: boolean;
  /** Aborted when the client goes (ends follow streams). */
  signal?: AbortSignal;
}
