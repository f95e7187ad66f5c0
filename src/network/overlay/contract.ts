// What overlay networking and cluster mode say to each other. The network layer declares both
// sides (it sits below cluster/): `OverlayControl`, what it needs of the cluster (the replicated
// network records, cluster-unique addresses, published endpoints), and `OverlayHost`, what it
// offers the cluster (the cluster's networks and remote endpoints pushed in; tasks attached).
import type { NetworkCreateBody } from '../../types/networks.ts';

/** A swarm-scoped network as the replicated store holds it. */
export interface SwarmNetwork {
  Id: string;
  Name: string;
  Created: string;
  Labels: Record<string, string>;
  Options: Record<string, string>;
  Attachable: boolean;
  Internal: boolean;
  Ingress: boolean;
  /** One IPv4 subnet (a /SubnetSize of the cluster's pools, or the one given) and its gateway. */
  subnet: string;
  gateway: string;
  ipamOptions: Record<string, string> | null;
  vni: number;
}

/** One container's endpoint on an overlay network, published by the node that runs it. */
export interface OverlayEndpoint {
  networkId: string;
  endpointId: string;
  containerId: string;
  /** The container's name (no slash) and its aliases on the network: what the DNS answers. */
  name: string;
  aliases: string[];
  ip: string;
  mac: string;
  nodeId: string;
  /** The node's data-path address (VXLAN tunnel end). */
  vtep: string;
  /**
   * A service's virtual IP (no container, no node): the DNS answers `name` with it, and each node
   * DNATs it to the endpoints whose names hold `tasks.<name>`.
   */
  vip?: boolean;
  /** On the ingress network's VIP: the service's routing-mesh ports, served on every node. */
  ports?: MeshPort[];
}

export interface MeshPort {
  proto: 'tcp' | 'udp' | 'sctp';
  published: number;
  target: number;
}

/** This node inside the cluster, as the data path needs it. */
export interface OverlayNode {
  nodeId: string;
  /** The data-path address (DataPathAddr, else the advertise address). */
  vtep: string;
  /** The cluster's DataPathPort (4789 by default). */
  port: number;
}

/** Implemented by cluster/ (on a manager); called by the network layer. */
export interface OverlayControl {
  create(body: NetworkCreateBody): Promise<{ Id: string }>;
  remove(networkId: string): Promise<void>;
  /** A cluster-unique IPv4 address on the network (the wanted one if free). */
  claimAddress(networkId: string, want?: string): Promise<string>;
  publish(ep: Omit<OverlayEndpoint, 'nodeId' | 'vtep'>): Promise<void>;
  release(networkId: string, endpointId: string, ip: string): Promise<void>;
}

/** Implemented by network/overlay/driver.ts; called by cluster/. */
export interface OverlayHost {
  /**
   * The cluster's networks (null node: this node left the cluster; the networks go). `events`
   * (managers, after their first push): changes are announced as swarm-scoped create/remove events.
   */
  setNetworks(node: OverlayNode | null, networks: SwarmNetwork[], opts?: { events?: boolean }): Promise<void>;
  /** Every endpoint of the cluster; this node's own are skipped. */
  setEndpoints(endpoints: OverlayEndpoint[]): Promise<void>;
  /**
   * For the services of cluster mode: lets a task's container join an overlay network that is not
   * attachable (the container then names the network in NetworkMode/EndpointsConfig as any other).
   */
  attachTask(networkRef: string, containerId: string): void;
  /** The endpoint IDs of this node's overlay endpoints (stale ones in the store are dropped). */
  localEndpoints(): string[];
  /** The daemon stops: this node's overlay devices and the routing mesh's chains go. */
  close(): Promise<void>;
}
