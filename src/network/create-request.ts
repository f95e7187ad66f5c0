// A network create request checked as dockerd checks it, before anything is made: field types,
// name, driver, scope, IPAM driver, ConfigFrom, options (daemon defaults merged), IPv4/IPv6, the
// IPAM config (one subnet per family), and the bridge driver's options. Pure over the existing
// networks, so every refusal is testable without a daemon.
import type { DaemonConfig } from '../config/daemon-config.ts';
import { conflict, forbidden, invalidParameter, notFound, unavailable } from '../errors.ts';
import type { IpamConfigEntry, NetworkCreateBody } from '../types/networks.ts';
import { isIPv4 } from './ipam/ip4.ts';
import { isV6Text } from './ipam/ip6.ts';
import { validateIpam } from './ipam/ipam-config.ts';
import { userBridgeName, validInterfaceName } from './naming.ts';
import {
  boolOpt,
  getOpt,
  intOpt,
  OPT_BRIDGE_NAME,
  OPT_ENABLE_IPV4,
  OPT_ENABLE_IPV6,
  OPT_HOST_BINDING,
  OPT_ICC,
  OPT_IFACE_PREFIX,
  OPT_MASQ,
  OPT_MTU,
} from './options.ts';
import type { NetworkRecord } from './records.ts';

const PREDEFINED = ['bridge', 'host', 'none'];

/** The networks a request is checked against. */
export interface ExistingNetworks {
  networks(): NetworkRecord[];
  findNetwork(ref: string): NetworkRecord;
}

export interface CreateRequest {
  name: string;
  /** The driver asked for ('bridge': the only one built). */
  driver: string;
  ipamDriver: string;
  /** The request's options, the config network's, or the request's with the daemon's defaults. */
  options: Record<string, string>;
  /** The IPAM config as given (or the config network's). */
  ipamConfig: IpamConfigEntry[];
  /** The config-only network this one takes its configuration from. */
  from?: NetworkRecord;
  enableIPv4: boolean;
  enableIPv6: boolean;
  /** The IPv4 and IPv6 entries with a subnet, if given. */
  v4?: IpamConfigEntry;
  v6?: IpamConfigEntry;
}

export interface BridgeOptions {
  bridgeName: string;
  mtu: number;
  icc: boolean;
  masquerade: boolean;
  hostBindingIpv4: string;
  ifPrefix: string;
}

/** Field types of a create request (the JSON decoder of dockerd refuses these with a 400). */
export function checkCreateBody(body: NetworkCreateBody): void {
  const raw = body as Record<string, unknown>;
  for (const k of ['Name', 'Driver', 'Scope'])
    if (raw[k] !== undefined && raw[k] !== null && typeof raw[k] !== 'string')
      throw invalidParameter(`invalid JSON: ${k} must be a string`);
  for (const k of ['Internal', 'Attachable', 'Ingress', 'ConfigOnly', 'EnableIPv4', 'EnableIPv6', 'CheckDuplicate']) {
    if (raw[k] !== undefined && raw[k] !== null && typeof raw[k] !== 'boolean')
      throw invalidParameter(`invalid JSON: ${k} must be a boolean`);
  }
  const stringMap = (v: unknown, what: string) => {
    if (v === undefined || v === null) return;
    if (typeof v !== 'object' || Array.isArray(v) || Object.values(v).some((x) => typeof x !== 'string'))
      throw invalidParameter(`invalid JSON: ${what} must be an object of strings`);
  };
  stringMap(body.Options, 'Options');
  stringMap(body.Labels, 'Labels');
  stringMap(body.IPAM?.Options, 'IPAM.Options');
  if (body.IPAM?.Config !== undefined && body.IPAM.Config !== null && !Array.isArray(body.IPAM.Config))
    throw invalidParameter('invalid JSON: IPAM.Config must be an array');
}

/** The request checked (dockerd's statuses and messages) and resolved. */
export function parseCreateRequest(body: NetworkCreateBody, nets: ExistingNetworks, cfg: DaemonConfig): CreateRequest {
  checkCreateBody(body);
  const name = body.Name ?? '';
  // As dockerd (libnetwork's IsValidName): any name that is not blank, spaces included ("test 01").
  if (!name.trim()) throw invalidParameter(`invalid name: network name must not be empty`);
  if (PREDEFINED.includes(name) || name === 'default') throw forbidden(`operation is not permitted on predefined ${name} network `);
  if (nets.networks().some((n) => n.Name === name)) throw conflict(`network with name ${name} already exists`);
  const driver = body.Driver || 'bridge';
  if (driver === 'host' || driver === 'null') throw forbidden(`only one instance of "${driver}" network is allowed`);
  if (driver === 'overlay')
    // dockerd's cluster errNoManager: a notAvailableError (503).
    throw unavailable(
      'This node is not a swarm manager. Use "docker swarm init" or "docker swarm join" to connect this node to swarm and try again.',
    );
  if (driver !== 'bridge') throw notFound(`could not find plugin ${driver} in v1 plugin registry: plugin not found`);
  if (body.Scope && body.Scope !== 'local')
    throw invalidParameter(`invalid scope ${JSON.stringify(body.Scope)}: only local networks are supported`);
  if (body.Ingress) throw forbidden('ingress networks are only supported in cluster (swarm) mode');
  const ipamDriver = body.IPAM?.Driver || 'default';
  if (ipamDriver !== 'default') throw notFound(`could not find plugin ${ipamDriver} in v1 plugin registry: plugin not found`);

  let options: Record<string, string> = { ...(body.Options ?? {}) };
  let ipamConfig = body.IPAM?.Config ?? [];
  let from: NetworkRecord | undefined;
  if (body.ConfigFrom?.Network) {
    from = nets.findNetwork(body.ConfigFrom.Network);
    if (!from.ConfigOnly) throw forbidden(`network ${body.ConfigFrom.Network} is not a config-only network`);
    if (Object.keys(options).length || ipamConfig.length)
      throw forbidden('user specified configurations are not supported if the network depends on a configuration network');
    options = { ...from.Options };
    ipamConfig = from.IPAM.Config;
  } else {
    for (const [k, v] of Object.entries(cfg['default-network-opts'][driver] ?? {})) if (!Object.hasOwn(options, k)) options[k] = v;
  }
  const enableIPv6 = body.EnableIPv6 ?? boolOpt(options, OPT_ENABLE_IPV6, false);
  const enableIPv4 = body.EnableIPv4 ?? boolOpt(options, OPT_ENABLE_IPV4, true);
  if (!enableIPv4) throw invalidParameter('networks without IPv4 are not built yet (EnableIPv4=false)');
  validateIpam(enableIPv6 ? ipamConfig : ipamConfig.filter((c) => !c.Subnet || !isV6Text(c.Subnet)));
  const v4 = ipamConfig.filter((c) => c.Subnet && !isV6Text(c.Subnet));
  const v6 = ipamConfig.filter((c) => c.Subnet && isV6Text(c.Subnet));
  // As dockerd's bridge driver: one subnet per family.
  if (v4.length > 1 || v6.length > 1) throw forbidden("bridge driver doesn't support multiple subnets");
  // As dockerd (validateIpamConfig): without EnableIPv6 an IPv6 subnet is kept in the IPAM config but
  // neither checked nor allocated; the network is IPv4 only.
  return {
    name,
    driver,
    ipamDriver,
    options,
    ipamConfig,
    ...(from ? { from } : {}),
    enableIPv4,
    enableIPv6,
    ...(v4[0] ? { v4: v4[0] } : {}),
    ...(v6[0] && enableIPv6 ? { v6: v6[0] } : {}),
  };
}

/** The bridge driver's options of a new network (`id` names its bridge when bridge.name is not given). */
export function bridgeOptions(options: Record<string, string>, id: string, nets: ExistingNetworks, cfg: DaemonConfig): BridgeOptions {
  const bridgeName = getOpt(options, OPT_BRIDGE_NAME) || userBridgeName(id);
  if (!validInterfaceName(bridgeName)) throw invalidParameter(`invalid bridge name ${JSON.stringify(bridgeName)}`);
  if (nets.networks().some((n) => n.x.bridge === bridgeName))
    throw forbidden(`bridge name ${bridgeName} is already in use by another network`);
  const mtu = intOpt(options, OPT_MTU, 1500, 68, 65535);
  const icc = boolOpt(options, OPT_ICC, true);
  const masquerade = boolOpt(options, OPT_MASQ, true) && cfg.iptables;
  const hostBindingIpv4 = getOpt(options, OPT_HOST_BINDING) ?? '';
  if (hostBindingIpv4 && !isIPv4(hostBindingIpv4)) throw invalidParameter(`invalid host binding address ${hostBindingIpv4}`);
  const ifPrefix = getOpt(options, OPT_IFACE_PREFIX) || 'eth';
  if (!/^[a-z][a-z0-9]{0,9}$/i.test(ifPrefix)) throw invalidParameter(`invalid container interface prefix ${JSON.stringify(ifPrefix)}`);
  return { bridgeName, mtu, icc, masquerade, hostBindingIpv4, ifPrefix };
}
