// What clients see: the network inspect/list document, and a container's NetworkSettings (inspect)
// and Networks/Ports (list), in dockerd's field order and null/[] conventions.
import type { NetContainer, NetworkView } from './container-contract.ts';
import { parsePortKey, portKey, requestedPorts } from './ports/ports.ts';
import type { Attachment, ContainerNet, NetworkRecord } from './records.ts';

/** A container's networking as inspect and list show it. */
export function networkInspect(n: NetworkRecord, containers: Record<string, unknown>): Record<string, unknown> {
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

function endpointSettings(rec: NetContainer, a: Attachment, net: NetworkRecord | undefined, c: ContainerNet): Record<string, unknown> {
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
  const networks: Record<string, unknown> = {};
  for (const a of c.attachments) networks[net(a.networkId)?.Name ?? a.name] = endpointSettings(rec, a, net(a.networkId), c);
  const running = rec.State.Running && c.sandbox !== undefined;
  const ports: Record<string, Array<{ HostIp: string; HostPort: string }> | null> = {};
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
  const legacy = bridgeAttachment ? (networks[net(bridgeAttachment.networkId)!.Name] as Record<string, unknown>) : undefined;
  const settings = {
    Bridge: bridgeFlag,
    SandboxID: running ? c.sandbox!.sandboxId : '',
    SandboxKey: running ? c.sandbox!.key : '',
    Ports: ports,
    HairpinMode: false,
    LinkLocalIPv6Address: '',
    LinkLocalIPv6PrefixLen: 0,
    SecondaryIPAddresses: null,
    SecondaryIPv6Addresses: null,
    EndpointID: (legacy?.EndpointID as string) ?? '',
    Gateway: (legacy?.Gateway as string) ?? '',
    GlobalIPv6Address: (legacy?.GlobalIPv6Address as string) ?? '',
    GlobalIPv6PrefixLen: (legacy?.GlobalIPv6PrefixLen as number) ?? 0,
    IPAddress: (legacy?.IPAddress as string) ?? '',
    IPPrefixLen: (legacy?.IPPrefixLen as number) ?? 0,
    IPv6Gateway: (legacy?.IPv6Gateway as string) ?? '',
    MacAddress: (legacy?.MacAddress as string) ?? '',
    Networks: networks,
  };
  summaryPorts.sort((a, b) => a.PrivatePort - b.PrivatePort || (a.PublicPort ?? 0) - (b.PublicPort ?? 0));
  return { settings, summaryNetworks: networks, ports: summaryPorts };
}
