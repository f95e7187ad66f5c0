// What clients see: the network inspect/list document, and a container's NetworkSettings (inspect)
// and Networks/Ports (list), in dockerd's field order and null/[] conventions.
import type { NetContainer, NetworkView } from './container-contract.ts';
import { parsePortKey, portKey, requestedPorts } from './ports/ports.ts';
import type { Attachment, ContainerNet, NetworkRecord } from './records.ts';
import type { Network, NetworkContainer } from '../types/api/index.ts';
import type { EndpointView, NetworkSettingsView, PortBindingView } from '../types/networks.ts';

/** A container's networking as inspect and list show it. */
/** The network document; its option and label maps are null where dockerd's are (the API description omits nulls). */
export type NetworkInspectView = Omit<Network, 'Options' | 'Labels' | 'IPAM'> & {
  IPAM: Omit<NonNullable<Network['IPAM']>, 'Options'> & { Options: Record<string, string> | null };
  Options: Record<string, string> | null;
  Labels: Record<string, string> | null;
};

export function networkInspect(n: NetworkRecord, containers: Record<string, NetworkContainer>): NetworkInspectView {
  return {
    Name: n.Name,
    Id: n.Id,
    Created: n.Created,
    Scope: n.Scope,
    Driver: n.Driver,
    EnableIPv4: n.EnableIPv4,
    EnableIPv6: n.EnableIPv6,
    IPAM: { Driver: n.IPAM.Driver, Options: n.IPAM.Options, Config: n.IPAM.Config },
    Internal: n.Internal,
    Attachable: n.Attachable,
    Ingress: n.Ingress,
    ConfigFrom: n.ConfigFrom,
    ConfigOnly: n.ConfigOnly,
    Containers: containers,
    Options: n.Options,
    Labels: n.Labels,
  };
}

/** Container name, aliases, short ID and hostname, without repeats (dockerd's DNSNames). */
export function dnsNamesFor(rec: NetContainer, aliases: string[]): string[] {
  const names = [rec.Name.replace(/^\//, ''), ...aliases, rec.Id.slice(0, 12), rec.Config.Hostname ?? ''].filter(Boolean);
  return names.filter((v, i) => names.indexOf(v) === i);
}

function endpointSettings(rec: NetContainer, a: Attachment, net: NetworkRecord | undefined, c: ContainerNet): EndpointView {
  const ep = c.sandbox?.endpoints.find((e) => e.networkId === a.networkId);
  const userDefined = net ? !net.x.predefined : false;
  return {
    IPAMConfig: a.config.IPAMConfig ?? null,
    Links: a.config.Links ?? null,
    Aliases: a.config.Aliases ?? null,
    MacAddress: ep?.mac ?? a.config.MacAddress ?? '',
    DriverOpts: a.config.DriverOpts ?? null,
    GwPriority: a.config.GwPriority ?? 0,
    NetworkID: a.networkId,
    EndpointID: ep?.endpointId ?? '',
    Gateway: ep?.gateway ?? '',
    IPAddress: ep?.ip ?? '',
    IPPrefixLen: ep?.prefixLen ?? 0,
    IPv6Gateway: ep?.gateway6 ?? '',
    GlobalIPv6Address: ep?.ip6 ?? '',
    GlobalIPv6PrefixLen: ep?.prefixLen6 ?? 0,
    DNSNames: userDefined ? dnsNamesFor(rec, a.config.Aliases ?? []) : null,
  };
}

export function buildContainerView(
  rec: NetContainer,
  c: ContainerNet,
  net: (id: string) => NetworkRecord | undefined,
  bridgeFlag: string,
): NetworkView {
  const networks: Record<string, EndpointView> = {};
  for (const a of c.attachments) networks[net(a.networkId)?.Name ?? a.name] = endpointSettings(rec, a, net(a.networkId), c);
  const running = rec.State.Running && c.sandbox !== undefined;
  const ports: Record<string, PortBindingView[] | null> = {};
  const summaryPorts: NetworkView['ports'] = [];
  if (running) {
    let exposed: Array<{ proto: 'tcp' | 'udp' | 'sctp'; port: number }> = [];
    try {
      exposed = requestedPorts(rec.HostConfig, rec.Config.ExposedPorts).exposed;
    } catch {
      // Bindings that no longer parse (a record from an older version) cannot fail an inspect:
      // the exposed ports alone are shown, each key that parses.
      exposed = Object.keys(rec.Config.ExposedPorts ?? {}).flatMap((k) => {
        try {
          return [parsePortKey(k)];
        } catch {
          return []; // an unparsable key is left out of the view (it was never published)
        }
      });
    }
    for (const p of exposed) {
      const bound = c.sandbox!.ports.filter((b) => b.proto === p.proto && b.containerPort === p.port);
      ports[portKey(p)] = bound.length ? bound.map((b) => ({ HostIp: b.hostIp, HostPort: String(b.hostPort) })) : null;
      if (bound.length === 0) summaryPorts.push({ PrivatePort: p.port, Type: p.proto });
      for (const b of bound) summaryPorts.push({ IP: b.hostIp, PrivatePort: p.port, PublicPort: b.hostPort, Type: p.proto });
    }
  }
  // The deprecated top-level fields mirror the default bridge's endpoint only.
  const bridgeAttachment = c.attachments.find((a) => net(a.networkId)?.x.defaultBridge);
  const legacy = bridgeAttachment ? networks[net(bridgeAttachment.networkId)!.Name] : undefined;
  const settings: NetworkSettingsView = {
    Bridge: bridgeFlag,
    SandboxID: running ? c.sandbox!.sandboxId : '',
    SandboxKey: running ? c.sandbox!.key : '',
    Ports: ports,
    HairpinMode: false,
    LinkLocalIPv6Address: '',
    LinkLocalIPv6PrefixLen: 0,
    SecondaryIPAddresses: null,
    SecondaryIPv6Addresses: null,
    EndpointID: legacy?.EndpointID ?? '',
    Gateway: legacy?.Gateway ?? '',
    GlobalIPv6Address: legacy?.GlobalIPv6Address ?? '',
    GlobalIPv6PrefixLen: legacy?.GlobalIPv6PrefixLen ?? 0,
    IPAddress: legacy?.IPAddress ?? '',
    IPPrefixLen: legacy?.IPPrefixLen ?? 0,
    IPv6Gateway: legacy?.IPv6Gateway ?? '',
    MacAddress: legacy?.MacAddress ?? '',
    Networks: networks,
  };
  summaryPorts.sort((a, b) => a.PrivatePort - b.PrivatePort || (a.PublicPort ?? 0) - (b.PublicPort ?? 0));
  return { settings, summaryNetworks: networks, ports: summaryPorts };
}
