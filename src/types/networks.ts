// Wire types of the /networks API: the create request, its IPAM entries, connect and disconnect.
import type { EndpointSettings } from './container-api.ts';

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
