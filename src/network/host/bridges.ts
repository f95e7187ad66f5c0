// Bridges of existing networks: brought up again at start-up (address, MTU, our alias), their
// sysctls, the stray ones a crash left, and the predefined host and none networks.
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { ZERO_TIME } from '../../util/time.ts';
import type { Logger } from '../../util/log.ts';
import { parseCidr } from '../ipam/ip4.ts';
import { parseCidr6 } from '../ipam/ip6.ts';
import { deleteLinks, ensureBridge, linkExists, linksWithAlias, writeSysctl } from './netlink.ts';
import { linkAlias, newId } from '../naming.ts';
import type { NetworkRecord } from '../records.ts';
import type { NetworkState } from '../state.ts';

/** route_localnet without the proxy; bridged frames through iptables for icc=false. */
export function bridgeSysctls(n: NetworkRecord, cfg: DaemonConfig, log: Logger): void {
  if (!n.x.bridge) return;
  // Without the proxy, loopback traffic to published ports is DNATed to the bridge.
  if (!cfg['userland-proxy']) writeSysctl(`net/ipv4/conf/${n.x.bridge}/route_localnet`, '1');
  // icc=false drops bridged traffic in FORWARD, which needs bridged frames to pass iptables.
  if (n.x.icc === false && !writeSysctl('net/bridge/bridge-nf-call-iptables', '1')) {
    log.warn(
      `network ${n.Name}: inter-container communication cannot be disabled: net.bridge.bridge-nf-call-iptables is not available (load the br_netfilter module)`,
    );
  }
  if (n.x.icc === false && n.x.subnet6) writeSysctl('net/bridge/bridge-nf-call-ip6tables', '1');
}

/** A user network's bridge as its record says (created again if the daemon owns it). */
export async function bringUpUserBridge(n: NetworkRecord, tag: string, cfg: DaemonConfig, log: Logger): Promise<void> {
  if (!n.x.bridge || !n.x.subnet || !n.x.gateway) return;
  if (!n.x.ownsBridge && !linkExists(n.x.bridge)) throw new Error(`bridge ${n.x.bridge} does not exist`);
  const address6 = n.x.subnet6 && n.x.gateway6 ? `${n.x.gateway6}/${parseCidr6(n.x.subnet6).bits}` : n.x.ownsBridge ? null : undefined;
  await ensureBridge({
    name: n.x.bridge,
    mtu: n.x.mtu ?? 1500,
    address: `${n.x.gateway}/${parseCidr(n.x.subnet).bits}`,
    address6,
    ...(n.x.ownsBridge ? { alias: linkAlias(tag) } : {}),
  });
  bridgeSysctls(n, cfg, log);
}

/** Bridges carrying this daemon's alias that no network owns (a crash in the middle of a removal). */
export async function removeStrayBridges(state: NetworkState, tag: string): Promise<void> {
  const known = new Set(state.networks().map((n) => n.x.bridge));
  const stray = linksWithAlias(linkAlias(tag)).filter((l) => !known.has(l));
  if (stray.length) await deleteLinks(stray);
}

/** The host and none networks, made once and kept. */
export function ensurePredefined(state: NetworkState, name: 'host' | 'none', driver: string): void {
  if (state.networks().some((n) => n.Name === name && n.x.predefined)) return;
  state.saveNetwork({
    Name: name,
    Id: newId(),
    Created: ZERO_TIME,
    Scope: 'local',
    Driver: driver,
    EnableIPv4: false,
    EnableIPv6: false,
    IPAM: { Driver: 'default', Options: null, Config: [] },
    Internal: false,
    Attachable: false,
    Ingress: false,
    ConfigFrom: { Network: '' },
    ConfigOnly: false,
    Options: {},
    Labels: {},
    x: { predefined: true },
  });
}
