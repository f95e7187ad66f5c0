// Pure decisions about a sandbox's endpoints: which network carries the default route, the veth
// each endpoint gets, and dockerd's wording when a sandbox cannot be set up.
import { EngineError, internal } from '../../errors.ts';
import type { NetContainer } from '../container-contract.ts';
import type { VethPlan } from '../host/netlink.ts';
import type { ActiveEndpoint, NetworkRecord, Sandbox } from '../records.ts';

/** Non-internal bridge networks qualify; highest GwPriority wins, ties go to the first name. */
export function chooseGateway(list: Array<{ net: NetworkRecord; priority: number }>): NetworkRecord | undefined {
  const candidates = list.filter((x) => !x.net.Internal);
  candidates.sort((a, b) => b.priority - a.priority || (a.net.Name < b.net.Name ? -1 : a.net.Name > b.net.Name ? 1 : 0));
  return candidates[0]?.net;
}

/** dockerd's wording for a failed sandbox set-up; the cause's class (400/403/404…) is kept. */
export function setupError(err: unknown, rec: NetContainer, sb: Sandbox): Error {
  const msg = (err as Error).message ?? String(err);
  const ports = sb.ports.length > 0 || /port is already allocated|userland proxy/.test(msg);
  const text = ports
    ? `failed to set up container networking: driver failed programming external connectivity on endpoint ${rec.Name.slice(1)} (${sb.endpoints[0]?.endpointId ?? sb.sandboxId}): ${msg}`
    : `failed to set up container networking: ${msg}`;
  if (err instanceof EngineError) return new EngineError(err.code, text, { cause: err });
  return internal(text, err);
}

/** The veth of an endpoint: its addresses, the gateway when its network carries the default route. */
export function vethPlan(ep: ActiveEndpoint, net: NetworkRecord, isGateway: boolean, hairpin: boolean): VethPlan {
  return {
    ifname: ep.ifname,
    hostIf: ep.hostIf,
    mac: ep.mac,
    mtu: net.x.mtu ?? 1500,
    address: `${ep.ip}/${ep.prefixLen}`,
    ...(isGateway ? { gateway: ep.gateway } : {}),
    bridge: ep.bridge,
    hairpin,
    ...(ep.ip6 ? { address6: `${ep.ip6}/${ep.prefixLen6}`, ...(isGateway && ep.gateway6 ? { gateway6: ep.gateway6 } : {}) } : {}),
  };
}
