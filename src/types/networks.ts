// Wire types of the /networks API: the create request, its IPAM entries, connect and disconnect.
import type { EndpointSettings } from './container-api.ts';
import type { GoJson } from './go-nil.ts';

/** One IPAM.Config entry (definition `IPAMConfig`): a subnet with its range, gateway and reserved addresses. */
export interface IpamConfigEntry {
  Subnet?: string;
  IPRange?: string;
  Gateway?: string;
  AuxiliaryAddresses?: Record<string, string>;
}

/** POST /networks/create (definition `NetworkCreateRequest`). */
export interface NetworkCreateBody {
  Name?: string;
  Driver?: string;
  Scope?: string;
  Internal?: boolean;
  Attachable?: boolean;
  Ingress?: boolean;
  ConfigOnly?: boolean;
  ConfigFrom?: { Network?: string } | null;
  IPAM?: { Driver?: string; Config?: IpamConfigEntry[] | null; Options?: Record<string, string> | null } | null;
  EnableIPv4?: boolean | null;
  EnableIPv6?: boolean | null;
  Options?: Record<string, string> | null;
  Labels?: Record<string, string> | null;
  CheckDuplicate?: boolean;
}

/** POST /networks/{id}/connect. */
export interface NetworkConnectBody {
  Container?: string;
  EndpointConfig?: EndpointSettings | null;
}

/** POST /networks/{id}/disconnect. */
export interface NetworkDisconnectBody {
  Container?: string;
  Force?: boolean;
}

/**
 * EndpointSettings as inspect and list show it: every field present (Go's struct), unset lists and
 * maps and a nil IPAMConfig as null.
 */
export type EndpointView = Required<GoJson<EndpointSettings>>;

/** A published port as inspect's NetworkSettings.Ports shows it. */
export interface PortBindingView {
  HostIp: string;
  HostPort: string;
}

/** A container's NetworkSettings in inspect, dockerd's deprecated top-level fields included. */
export interface NetworkSettingsView {
  Bridge: string;
  SandboxID: string;
  SandboxKey: string;
  Ports: Record<string, PortBindingView[] | null>;
  HairpinMode: boolean;
  LinkLocalIPv6Address: string;
  LinkLocalIPv6PrefixLen: number;
  SecondaryIPAddresses: null;
  SecondaryIPv6Addresses: null;
  EndpointID: string;
  Gateway: string;
  GlobalIPv6Address: string;
  GlobalIPv6PrefixLen: number;
  IPAddress: string;
  IPPrefixLen: number;
  IPv6Gateway: string;
  MacAddress: string;
  Networks: Record<string, EndpointView>;
}
