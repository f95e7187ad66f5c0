// The answers of a node that is not part of a cluster: every cluster operation answers as dockerd
// does outside swarm mode (503 with its messages; `leave` says there is nothing to leave).
// service.ts uses them while the node is inactive; init and join are service.ts's own.
import { unavailable } from '../errors.ts';
import type { ClusterObject } from '../types/cluster.ts';

/** dockerd's errNoManager for a node without a cluster. */
export const NOT_A_MANAGER =
  'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.';
/** dockerd's errNoSwarm. */
export const NOT_IN_A_CLUSTER = 'This node is not part of a swarm';

const noManager = (): never => {
  throw unavailable(NOT_A_MANAGER);
};

export class InactiveCluster {
  async inspectCluster(): Promise<ClusterObject> {
    return noManager();
  }

  async leave(): Promise<void> {
    throw unavailable(NOT_IN_A_CLUSTER);
  }

  async updateCluster(): Promise<void> {
    return noManager();
  }

  async unlockKey(): Promise<{ UnlockKey: string }> {
    return noManager();
  }

  async unlock(): Promise<void> {
    return noManager();
  }

  async list(): Promise<ClusterObject[]> {
    return noManager();
  }

  async inspect(): Promise<ClusterObject> {
    return noManager();
  }

  async create(): Promise<{ ID: string }> {
    return noManager();
  }

  async update(): Promise<{ Warnings?: string[] }> {
    return noManager();
  }

  async remove(): Promise<void> {
    return noManager();
  }

  async logs(): Promise<AsyncIterable<Buffer>> {
    return noManager();
  }
}
