// What the network layer keeps in the store: one record per network (kv_networks) and one per
// container (kv_net_containers) with the networks it is configured for and, while it runs, its
// sandbox — namespace, endpoints (addresses, veths), published ports — so a restarted daemon knows
// exactly what exists and can keep it (live-restore) or clean it up.
import type { EngineDatabase } from '../store/database.ts';
import { RecordTable } from '../store/kv.ts';
import type { IpamConfigEntry } from '../types/networks.ts';
import type { Proto } from './ports/ports.ts';

/** The inspect document (wire names) plus the daemon's own facts under `x`. */
export interface NetworkRecord {
  Name: string;
  Id: string;
  Created: string;
  Scope: string;
  Driver: string;
  EnableIPv4: boolean;
  EnableIPv6: boolean;
  IPAM: { Driver: string; Options: Record<string, string> | null; Config: IpamConfigEntry[] };
  Internal: boolean;
  Attachable: boolean;
  Ingress: boolean;
  ConfigFrom: { Network: string };
  ConfigOnly: boolean;
  Options: Record<string, string>;
  Labels: Record<string, string>;
  x: NetworkFacts;
}

export interface NetworkFacts {
  /** bridge, host and none: listed always, never removed. */
  predefined: boolean;
  /** The default bridge network ("bridge"). */
  defaultBridge?: boolean;
  bridge?: string;
  /** Created by the daemon (deleted with the network); false for an existing --bridge or bridge.name. */
  ownsBridge?: boolean;
  /** IPv4 subnet, gateway (the bridge's address), allocation range, as CIDR / address text. */
  subnet?: string;
  gateway?: string;
  range?: string;
  /** The containers' default route when it is not the bridge address (--default-gateway). */
  routeVia?: string;
  /** Addresses never handed out (gateway, auxiliary addresses). */
  reserved?: string[];
  /** The subnet was given by the user: static container addresses are allowed. */
  userSubnet?: boolean;
  mtu?: number;
  icc?: boolean;
  masquerade?: boolean;
  hostBindingIpv4?: string;
  ifPrefix?: string;
  /** IPv6 (EnableIPv6): subnet, the bridge's address, allocation range, --default-gateway-v6, reserved. */
  subnet6?: string;
  gateway6?: string;
  range6?: string;
  routeVia6?: string;
  reserved6?: string[];
  userSubnet6?: boolean;
}

export interface EndpointConfig {
  Aliases?: string[] | null;
  IPAMConfig?: { IPv4Address?: string; IPv6Address?: string; LinkLocalIPs?: string[] } | null;
  MacAddress?: string;
  Links?: string[] | null;
  DriverOpts?: Record<string, string> | null;
  GwPriority?: number;
}

export interface Attachment {
  networkId: string;
  /** The network's name when attached (shown if the network is gone since). */
  name: string;
  config: EndpointConfig;
}

export interface ActiveEndpoint {
  networkId: string;
  endpointId: string;
  ifname: string;
  hostIf: string;
  bridge: string;
  ip: string;
  prefixLen: number;
  gateway: string;
  mac: string;
  /** On IPv6 networks: the container's address, prefix length and default router. */
  ip6?: string;
  prefixLen6?: number;
  gateway6?: string;
}

export interface ActivePort {
  proto: Proto;
  containerPort: number;
  hostIp: string;
  hostPort: number;
  /** Where traffic goes: the container's IPv6 address for an IPv6 host address when it has one, else its IPv4 one. */
  containerIp: string;
  bridge: string;
  /** pid of an external userland proxy. */
  proxyPid?: number;
  /** The IPv6 twin of a wildcard binding: served by that binding's (dual-stack) listener. */
  sharesListener?: boolean;
}

export interface Sandbox {
  key: string;
  sandboxId: string;
  endpoints: ActiveEndpoint[];
  ports: ActivePort[];
  /** Network whose endpoint carries the default route (and the published ports). */
  gatewayNetworkId?: string;
}

export interface ContainerNet {
  id: string;
  attachments: Attachment[];
  sandbox?: Sandbox;
}

export class NetworkStore {
  readonly networks: RecordTable<NetworkRecord>;
  readonly containers: RecordTable<ContainerNet>;

  constructor(db: EngineDatabase) {
    this.networks = new RecordTable<NetworkRecord>(db, 'networks');
    this.containers = new RecordTable<ContainerNet>(db, 'net_containers');
  }
}
