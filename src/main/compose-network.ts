// The network layer's part of the composition root: its services built, each with what it needs
// (state, firewall, ports, DNS, sandboxes, links, the containers' and the API's sides, start-up and
// shutdown), and handed back as the four faces the rest of the daemon uses.
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { EventPublisher } from '../events/bus.ts';
import { ContainerNetworking } from '../network/container-networks.ts';
import type { ContainerLookup, ContainerNetworks, RunNetworking } from '../network/container-contract.ts';
import { NetworkDns } from '../network/dns/dns-glue.ts';
import { FirewallSync } from '../network/firewall/firewall-sync.ts';
import { NetworkLifecycle } from '../network/lifecycle.ts';
import { ContainerLinks } from '../network/sandbox/links.ts';
import { daemonTag } from '../network/naming.ts';
import { NetworksApi } from '../network/networks-api.ts';
import type { OverlayControl } from '../network/overlay/contract.ts';
import { OverlayNetworks } from '../network/overlay/driver.ts';
import { PortPublisher } from '../network/ports/port-publisher.ts';
import { RootlesskitPorts } from '../network/ports/rootlesskit-ports.ts';
import { SandboxService } from '../network/sandbox/sandboxes.ts';
import { NetworkState } from '../network/state.ts';
import type { EngineDatabase } from '../store/database.ts';
import type { Logger } from '../util/log.ts';

export interface NetworkingDeps {
  db: EngineDatabase;
  config: () => DaemonConfig;
  log: Logger;
  execRoot: string;
  /** network create/destroy/connect/disconnect events. */
  events: EventPublisher;
  /** The daemon's stable ID: its IPv6 ULA pool derives from it. */
  daemonId: string;
  /** Containers by reference (DNS answers, links, connect/disconnect, inspect's names). */
  containers: ContainerLookup;
  env?: NodeJS.ProcessEnv;
  /** Whether this node is an active cluster manager. */
  clusterManager?: () => boolean;
  /** Cluster mode's side of overlay networks (undefined while it is not loaded). */
  overlayControl?: () => OverlayControl | undefined;
}

export interface Networking {
  /** init (before containers start), reconcile (after they are restored), shutdown. */
  lifecycle: NetworkLifecycle;
  /** The /networks routes' backend. */
  api: NetworksApi;
  /** The task launcher's side: sandboxes, /etc/hosts entries, link variables. */
  run: RunNetworking;
  /** The containers service's side: create checks, removal, views. */
  containers: ContainerNetworks;
  /** Overlay networks, as cluster mode drives them. */
  overlay: OverlayNetworks;
}

export function composeNetworking(d: NetworkingDeps): Networking {
  const { config, log, containers } = d;
  const tag = daemonTag(d.execRoot);
  const state = new NetworkState(d.db, d.events);
  const firewall = new FirewallSync({ config, log, state, tag });
  // Rootless (inside rootlesskit): published ports are opened on the host by its port driver.
  const rootlesskitDir = (d.env ?? process.env).ROOTLESSKIT_STATE_DIR;
  const ports = new PortPublisher({
    config,
    log,
    state,
    firewall,
    tag,
    ...(rootlesskitDir ? { parentPorts: new RootlesskitPorts(rootlesskitDir) } : {}),
  });
  // The DNS answers remote overlay endpoints too; the overlay driver starts DNS servers.
  let overlay: OverlayNetworks | undefined;
  const dns = new NetworkDns({ config, log, state, containers, remote: (id) => overlay?.remoteNames(id) ?? [] });
  overlay = new OverlayNetworks({ log: log.child({ module: 'overlay' }), state, dns, firewall, control: () => d.overlayControl?.(), tag });
  const sandboxes = new SandboxService({ config, log, execRoot: d.execRoot, state, ports, dns, firewall, overlay });
  const links = new ContainerLinks({ config, state, containers });
  const lifecycle = new NetworkLifecycle({
    config,
    log,
    state,
    firewall,
    ports,
    dns,
    sandboxes,
    overlay,
    tag,
    ulaSeed: d.daemonId,
    ...(d.env ? { env: d.env } : {}),
  });
  return {
    lifecycle,
    api: new NetworksApi({
      config,
      log,
      state,
      firewall,
      dns,
      sandboxes,
      containers,
      tag,
      ulaSeed: d.daemonId,
      ...(d.clusterManager ? { clusterManager: d.clusterManager } : {}),
      overlay: () => d.overlayControl?.(),
    }),
    run: {
      setupSandbox: (rec) => sandboxes.setupSandbox(rec),
      teardownSandbox: (id) => sandboxes.teardownSandbox(id),
      extraHosts: (rec) => links.extraHosts(rec),
      linkEnvironment: (rec) => links.linkEnvironment(rec),
    },
    containers: new ContainerNetworking({ config, state, sandboxes }),
    overlay,
  };
}
