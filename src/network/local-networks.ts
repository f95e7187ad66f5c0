// A local network made and unmade: its record from the checked request (a config-only network
// has no devices), the bridge with its subnets chosen (given or from the pools) under the
// host-wide lock, the firewall and the embedded DNS; at removal its DNS and the bridge it owns.
import type { DaemonConfig } from '../config/daemon-config.ts';
import { forbidden, internal } from '../errors.ts';
import type { IpamConfigEntry, NetworkCreateBody } from '../types/networks.ts';
import type { NetworkCreateResponse } from '../types/api/index.ts';
import type { Logger } from '../util/log.ts';
import { nowIso } from '../util/time.ts';
import { bridgeSysctls } from './host/bridges.ts';
import type { NetworkDns } from './dns/dns-glue.ts';
import type { FirewallSync } from './firewall/firewall-sync.ts';
import { withHostLock } from './ipam/host-lock.ts';
import { formatCidr, formatIPv4, parseCidr, type Cidr } from './ipam/ip4.ts';
import { parseCidr6 } from './ipam/ip6.ts';
import { ipv4First } from './ipam/ipam-config.ts';
import { DEFAULT_POOLS, hostRoutes, hostRoutes6, pickSubnet, type AddressPool } from './ipam/ipam.ts';
import { bridgeOptions, parseCreateRequest, type CreateRequest } from './create-request.ts';
import { deleteLinks, ensureBridge, isBridge, linkExists } from './host/netlink.ts';
import { linkAlias, newId } from './naming.ts';
import type { NetworkFacts, NetworkRecord } from './records.ts';
import type { NetworkState } from './state.ts';
import { checkFreeSubnet, newIPv6Facts, pools6, takenSubnets } from './ipam/subnets.ts';

export interface LocalNetworksDeps {
  log: Logger;
  state: NetworkState;
  firewall: FirewallSync;
  dns: NetworkDns;
  /** The daemon's tag: a bridge it makes carries its alias. */
  tag: string;
  /** Seed of the daemon's ULA /48 (its ID). */
  ulaSeed: string;
}

export class LocalNetworks {
  constructor(private readonly d: LocalNetworksDeps) {}

  /** Creates a local network (the caller holds the networks' lock). */
  async create(body: NetworkCreateBody, cfg: DaemonConfig): Promise<NetworkCreateResponse> {
    const req = parseCreateRequest(body, this.d.state, cfg);
    const id = newId();
    const base: Omit<NetworkRecord, 'x'> = {
      Name: req.name,
      Id: id,
      Created: nowIso(),
      Scope: 'local',
      Driver: body.ConfigOnly ? 'null' : req.driver,
      EnableIPv4: req.enableIPv4,
      EnableIPv6: req.enableIPv6,
      IPAM: { Driver: req.ipamDriver, Options: body.IPAM?.Options ?? null, Config: ipv4First(req.ipamConfig).map((c) => ({ ...c })) },
      Internal: body.Internal === true,
      Attachable: body.Attachable === true,
      Ingress: false,
      ConfigFrom: { Network: req.from?.Name ?? '' },
      ConfigOnly: body.ConfigOnly === true,
      Options: req.options,
      Labels: { ...(body.Labels ?? {}) },
    };
    if (body.ConfigOnly) {
      const rec: NetworkRecord = { ...base, x: { predefined: false } };
      this.d.state.saveNetwork(rec);
      this.d.state.event(rec, 'create');
      return { Id: id, Warning: '' };
    }
    const rec: NetworkRecord = { ...base, x: await this.makeBridge(req, id, cfg) };
    // The IPAM config shows what was chosen: subnets from the pools, gateways filled in.
    const x = rec.x;
    const filled = (entry: IpamConfigEntry | undefined, subnet: string, gateway: string) => {
      if (!entry) return [{ Subnet: subnet, Gateway: gateway }];
      if (!entry.Gateway) rec.IPAM.Config = rec.IPAM.Config.map((c) => (c.Subnet === entry.Subnet ? { ...c, Gateway: gateway } : c));
      return [];
    };
    rec.IPAM.Config = [...filled(req.v4, x.subnet!, x.gateway!), ...rec.IPAM.Config];
    if (x.subnet6) rec.IPAM.Config.push(...filled(req.v6, x.subnet6, x.gateway6!));
    if (x.subnet6 && cfg['ip-forward']) this.d.firewall.enableForwarding6();
    this.d.state.saveNetwork(rec);
    this.d.state.addresses.add(rec);
    bridgeSysctls(rec, cfg, this.d.log);
    try {
      await this.d.firewall.sync();
    } catch (err) {
      await this.removeDevices(rec);
      this.d.state.deleteNetwork(rec);
      throw internal(`programming the firewall for network ${req.name}: ${(err as Error).message}`);
    }
    await this.d.dns.start(rec);
    this.d.state.event(rec, 'create');
    return { Id: id, Warning: '' };
  }

  /** The new network's bridge, with its subnets chosen (given or from the pools) under the host-wide lock. */
  private async makeBridge(req: CreateRequest, id: string, cfg: DaemonConfig): Promise<NetworkFacts> {
    const opts = bridgeOptions(req.options, id, this.d.state, cfg);
    const ownsBridge = !linkExists(opts.bridgeName);
    if (!ownsBridge && !isBridge(opts.bridgeName)) throw forbidden(`device ${opts.bridgeName} exists and is not a bridge`);
    const given = req.v4;
    return withHostLock(async () => {
      const nets = this.d.state.networks();
      let subnet: Cidr;
      if (given?.Subnet) {
        subnet = parseCidr(given.Subnet);
        checkFreeSubnet(nets, subnet);
      } else {
        const pools: AddressPool[] = cfg['default-address-pools'].length ? cfg['default-address-pools'] : DEFAULT_POOLS;
        const picked = pickSubnet(pools, takenSubnets(nets, hostRoutes()));
        if (!picked) throw forbidden('all predefined address pools have been fully subnetted');
        subnet = picked;
      }
      const gateway = given?.Gateway || formatIPv4(subnet.base + 1);
      const x: NetworkFacts = {
        predefined: false,
        bridge: opts.bridgeName,
        ownsBridge,
        subnet: formatCidr(subnet),
        gateway,
        ...(given?.IPRange ? { range: formatCidr(parseCidr(given.IPRange)) } : {}),
        reserved: Object.values(given?.AuxiliaryAddresses ?? {}),
        userSubnet: Boolean(given?.Subnet),
        mtu: opts.mtu,
        icc: opts.icc,
        masquerade: opts.masquerade,
        hostBindingIpv4: opts.hostBindingIpv4,
        ifPrefix: opts.ifPrefix,
        ...(req.enableIPv6 ? newIPv6Facts(nets, pools6(cfg['default-address-pools'], this.d.ulaSeed), hostRoutes6(), req.v6) : {}),
      };
      const address6 = x.subnet6 ? `${x.gateway6}/${parseCidr6(x.subnet6).bits}` : undefined;
      await ensureBridge({
        name: opts.bridgeName,
        mtu: opts.mtu,
        address: `${gateway}/${subnet.bits}`,
        ...(address6 ? { address6 } : {}),
        ...(ownsBridge ? { alias: linkAlias(this.d.tag) } : {}),
      });
      return x;
    });
  }

  /** A removed network's DNS and the bridge it owns. */
  async removeDevices(n: NetworkRecord): Promise<void> {
    await this.d.dns.stop(n.Id);
    if (n.x.ownsBridge && n.x.bridge) await deleteLinks([n.x.bridge]);
  }
}
