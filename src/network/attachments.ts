// Which networks a container is configured for, from its NetworkMode and EndpointsConfig, with
// dockerd's checks and messages for modes, networks and endpoint settings (static addresses,
// aliases, MAC). Pure over a network lookup, so the rules are testable without a daemon.
import { EngineError, invalidParameter } from '../errors.ts';
import type { ContainerConfig, EndpointSettings, HostConfig, NetworkingConfig } from '../types/container-api.ts';
import { contains, isIPv4, parseCidr, parseIPv4 } from './ipam/ip4.ts';
import { contains6, isIPv6, parseCidr6, parseIPv6 } from './ipam/ip6.ts';
import type { Attachment, EndpointConfig, NetworkRecord } from './records.ts';

/** The network lookups the rules need (NetworkState provides them). */
export interface NetworkLookup {
  /** By ID, name or unique ID prefix; throws the 404 (or 400 when ambiguous). */
  findNetwork(ref: string): NetworkRecord;
  network(id: string): NetworkRecord | undefined;
  defaultBridge(): NetworkRecord | undefined;
}

const PREDEFINED = ['bridge', 'host', 'none'];

/**
 * The networks a container is configured for: its NetworkMode's network first, then the other
 * EndpointsConfig entries. Validates modes, network existence and endpoint settings (dockerd's
 * messages); throws the 400/404.
 */
export function attachmentsFor(
  nets: NetworkLookup,
  hc: HostConfig,
  config: ContainerConfig,
  nc: NetworkingConfig | undefined,
): Attachment[] {
  const mode = !hc.NetworkMode || hc.NetworkMode === 'default' ? 'bridge' : hc.NetworkMode;
  const eps = nc?.EndpointsConfig ?? {};
  const entries = Object.entries(eps).map(([ref, cfg]) => ({ ref, cfg: cfg ?? {} }));
  if (config.NetworkDisabled) return [];
  if (mode.startsWith('container:')) {
    if (entries.length)
      throw invalidParameter('container sharing network namespace with another container or host cannot be connected to any other network');
    return [];
  }
  // As dockerd, a network may not exist yet when the container is created: it is looked up
  // again by name at start ("network … not found" then).
  const lookup = (ref: string): NetworkRecord | undefined => {
    try {
      return nets.findNetwork(ref);
    } catch (err) {
      if (err instanceof EngineError && err.code === 'NOT_FOUND') return undefined;
      throw err;
    }
  };
  const primary = mode === 'bridge' ? nets.defaultBridge() : lookup(mode);
  if (mode === 'bridge' && !primary) return []; // -b none: no default network, loopback only
  const out: Attachment[] = [];
  const add = (ref: string, net: NetworkRecord | undefined, cfg: EndpointSettings) => {
    if (net && out.some((a) => a.networkId === net.Id)) return;
    if (net?.ConfigOnly) throw invalidParameter(`cannot attach to config-only network ${net.Name}`);
    try {
      out.push({ networkId: net?.Id ?? '', name: net?.Name ?? ref, config: validateEndpoint(net, cfg, ref) });
    } catch (err) {
      throw invalidParameter(`invalid config for network ${ref}: ${(err as Error).message}`);
    }
  };
  const primaryEntry = entries.find((e) => (primary ? refersTo(e.ref, primary) : e.ref === mode));
  add(mode, primary, {
    ...(primaryEntry?.cfg ?? {}),
    ...(config.MacAddress && !primaryEntry?.cfg.MacAddress ? { MacAddress: config.MacAddress } : {}),
  });
  for (const e of entries) {
    if (e === primaryEntry) continue;
    add(e.ref, lookup(e.ref), e.cfg);
  }
  const special = out.find(
    (a) => nets.network(a.networkId) && (nets.network(a.networkId)!.Driver === 'host' || nets.network(a.networkId)!.Driver === 'null'),
  );
  if (special && out.length > 1) {
    const n = nets.network(special.networkId)!;
    throw invalidParameter(
      n.Driver === 'host'
        ? 'container sharing network namespace with another container or host cannot be connected to any other network'
        : 'container cannot be connected to multiple networks with one of the networks in private (none) mode',
    );
  }
  return out;
}

/**
 * attachmentsFor for a record made before networking knew the container (or whose network facts
 * were lost): a configuration that no longer validates gives no networks rather than an error.
 */
export function attachmentsOrNone(nets: NetworkLookup, hc: HostConfig, config: ContainerConfig): Attachment[] {
  try {
    return attachmentsFor(nets, hc, config, undefined);
  } catch {
    return []; // the container runs (or shows) with loopback only, as it was created
  }
}

function refersTo(ref: string, n: NetworkRecord): boolean {
  // The CLI keys the default network's endpoint settings "default".
  if (ref === 'default') return n.x.defaultBridge === true;
  return ref === n.Name || ref === n.Id || (ref.length >= 3 && n.Id.startsWith(ref));
}

/** dockerd's endpoint checks; without the network (not created yet) only the network-free ones. */
export function validateEndpoint(net: NetworkRecord | undefined, cfg: EndpointSettings, ref = net?.Name ?? ''): EndpointConfig {
  const errs: string[] = [];
  const ipam = cfg.IPAMConfig ?? undefined;
  const v4 = ipam?.IPv4Address ?? '';
  const userDefined = net ? !net.x.predefined : !PREDEFINED.includes(ref) && ref !== 'default';
  if (!userDefined) {
    if (v4 || ipam?.IPv6Address) errs.push('user specified IP address is supported on user defined networks only');
    if (cfg.Aliases?.length) errs.push('network-scoped alias is supported only for containers in user defined networks');
  }
  if (v4) {
    if (!isIPv4(v4) || v4 === '0.0.0.0') errs.push(`invalid IPv4 address: ${v4}`);
    else if (net && userDefined) {
      if (!net.x.userSubnet)
        errs.push('user specified IP address is supported only when connecting to networks with user configured subnets');
      else if (!contains(parseCidr(net.x.subnet!), parseIPv4(v4)))
        errs.push(`no configured subnet or ip-range contain the IP address ${v4}`);
    }
  }
  const v6 = ipam?.IPv6Address ?? '';
  if (v6) {
    if (!isIPv6(v6) || parseIPv6(v6) === 0n) errs.push(`invalid IPv6 address: ${v6}`);
    else if (net && userDefined) {
      if (!net.x.subnet6) errs.push(`no configured subnet contains IP address ${v6}: IPv6 is not enabled on network ${net.Name}`);
      else if (!net.x.userSubnet6)
        errs.push('user specified IP address is supported only when connecting to networks with user configured subnets');
      else if (!contains6(parseCidr6(net.x.subnet6), parseIPv6(v6)))
        errs.push(`no configured subnet or ip-range contain the IP address ${v6}`);
    }
  }
  if (cfg.MacAddress && !/^([0-9a-fA-F]{2}[:-]){5}[0-9a-fA-F]{2}$/.test(cfg.MacAddress))
    throw invalidParameter(`invalid MAC address ${cfg.MacAddress}`);
  if (errs.length === 1) throw invalidParameter(`invalid endpoint settings:\n${errs[0]}`);
  if (errs.length > 1) throw invalidParameter(`invalid endpoint settings:\n* ${errs.join('\n* ')}`);
  const out: EndpointConfig = {};
  if (ipam && (ipam.IPv4Address || ipam.IPv6Address || ipam.LinkLocalIPs?.length)) {
    out.IPAMConfig = {
      ...(ipam.IPv4Address ? { IPv4Address: ipam.IPv4Address } : {}),
      ...(ipam.IPv6Address ? { IPv6Address: ipam.IPv6Address } : {}),
      ...(ipam.LinkLocalIPs?.length ? { LinkLocalIPs: ipam.LinkLocalIPs } : {}),
    };
  }
  if (cfg.Aliases?.length) out.Aliases = [...cfg.Aliases];
  if (cfg.Links?.length) out.Links = [...cfg.Links];
  if (cfg.MacAddress) out.MacAddress = cfg.MacAddress.toLowerCase().replace(/-/g, ':');
  if (cfg.DriverOpts && Object.keys(cfg.DriverOpts).length) out.DriverOpts = { ...cfg.DriverOpts };
  if (cfg.GwPriority) out.GwPriority = cfg.GwPriority;
  return out;
}
