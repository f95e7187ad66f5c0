// What a container's run gets from the default bridge besides its sandbox: /etc/hosts lines for
// --add-host (host-gateway resolved) and legacy --link targets, and the --link environment.
import type { DaemonConfig } from '../../config/daemon-config.ts';
import { invalidParameter } from '../../errors.ts';
import type { ContainerLookup, NetContainer } from '../container-contract.ts';
import { linkEnv } from './link-env.ts';
import type { ActiveEndpoint } from '../records.ts';
import type { NetworkState } from '../state.ts';

export interface ContainerLinksDeps {
  config: () => DaemonConfig;
  state: NetworkState;
  containers: ContainerLookup;
}

export class ContainerLinks {
  constructor(private readonly d: ContainerLinksDeps) {}

  /**
   * /etc/hosts lines ("ip name") for --add-host (host-gateway resolved to --host-gateway-ip(s) or
   * the default bridge's address) and legacy --link entries on the default bridge.
   */
  extraHosts(rec: NetContainer): string[] {
    const out: string[] = [];
    for (const entry of rec.HostConfig.ExtraHosts ?? []) {
      let sep = entry.indexOf('=');
      if (sep < 0) sep = entry.indexOf(':');
      const name = entry.slice(0, sep);
      const ip = entry.slice(sep + 1).replace(/^\[|\]$/g, '');
      if (ip === 'host-gateway') for (const g of this.hostGatewayIps()) out.push(`${g} ${name}`);
      else out.push(`${ip} ${name}`);
    }
    for (const { alias, other, ep } of this.resolveLinks(rec)) {
      out.push(`${ep.ip} ${[alias, other.Id.slice(0, 12), other.Name.slice(1)].filter((v, i, a) => a.indexOf(v) === i).join(' ')}`);
    }
    return out;
  }

  /** The legacy --link environment (ALIAS_PORT_…, ALIAS_NAME, ALIAS_ENV_…) for the container's process. */
  linkEnvironment(rec: NetContainer): string[] {
    return this.resolveLinks(rec).flatMap(({ alias, other, ep }) =>
      linkEnv({
        alias,
        parentName: rec.Name,
        childIp: ep.ip,
        childEnv: other.Config.Env ?? [],
        exposedPorts: Object.keys(other.Config.ExposedPorts ?? {}),
      }),
    );
  }

  /**
   * --link targets on the default bridge: running containers only (dockerd's error otherwise). On a
   * user-defined network a link is a DNS alias of that network instead (see dns-glue.ts).
   */
  private resolveLinks(rec: NetContainer): Array<{ alias: string; other: NetContainer; ep: ActiveEndpoint }> {
    const bridge = this.d.state.defaultBridge();
    const mode = rec.HostConfig.NetworkMode ?? '';
    if (mode !== '' && mode !== 'default' && mode !== 'bridge') return [];
    return (rec.HostConfig.Links ?? []).map((link) => {
      const [target = '', aliasPath = ''] = link.split(':');
      const alias = aliasPath.split('/').pop() || target.replace(/^\//, '');
      const other = this.find(target.replace(/^\//, ''));
      const ep = other && bridge ? this.d.state.container(other.Id)?.sandbox?.endpoints.find((e) => e.networkId === bridge.Id) : undefined;
      if (!other || !ep)
        throw invalidParameter(
          `Cannot link to a non running container: ${target.startsWith('/') ? target : `/${target}`} AS ${rec.Name}/${alias}`,
        );
      return { alias, other, ep };
    });
  }

  private find(ref: string): NetContainer | undefined {
    try {
      return this.d.containers.find(ref);
    } catch {
      return undefined; // an unknown link target is reported as not running, below (dockerd's message)
    }
  }

  private hostGatewayIps(): string[] {
    const cfg = this.d.config();
    if (cfg['host-gateway-ips'].length) return cfg['host-gateway-ips'];
    const bridge = this.d.state.defaultBridge();
    if (!bridge?.x.gateway) throw invalidParameter('unable to derive the IP value for host-gateway');
    return bridge.x.gateway6 ? [bridge.x.gateway, bridge.x.gateway6] : [bridge.x.gateway];
  }
}
