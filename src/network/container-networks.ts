// The containers service's side of networking: a create request's NetworkMode and EndpointsConfig
// checked and recorded, a removed container forgotten, and its networks as inspect, list and the
// `network` ps filter show them.
import type { DaemonConfig } from '../config/daemon-config.ts';
import type { ContainerConfig, HostConfig, NetworkingConfig } from '../types/container-api.ts';
import { attachmentsFor, attachmentsOrNone } from './attachments.ts';
import type { ContainerNetworks, NetContainer, NetworkView } from './container-contract.ts';
import type { SandboxService } from './sandbox/sandboxes.ts';
import type { NetworkState } from './state.ts';
import { buildContainerView } from './views.ts';

export interface ContainerNetworkingDeps {
  config: () => DaemonConfig;
  state: NetworkState;
  sandboxes: SandboxService;
}

export class ContainerNetworking implements ContainerNetworks {
  constructor(private readonly d: ContainerNetworkingDeps) {}

  /** Create-time checks of NetworkMode and EndpointsConfig; returns warnings for the create response. */
  validateCreate(hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): string[] {
    attachmentsFor(this.d.state, hc, config, nc);
    return [];
  }

  /** Records the container's networks (after the create succeeded). */
  containerCreated(id: string, hc: HostConfig, config: ContainerConfig, nc: NetworkingConfig | undefined): void {
    this.d.state.persist({ id, attachments: attachmentsFor(this.d.state, hc, config, nc) });
  }

  /** The container is gone: its sandbox (if any) was torn down by the launcher; forget the rest. */
  async containerRemoved(id: string): Promise<void> {
    await this.d.sandboxes.withContainer(id, async () => {
      await this.d.sandboxes.teardownLocked(id);
      this.d.state.forgetContainer(id);
    });
  }

  /** NetworkSettings for inspect, and the list entry's networks and ports. */
  containerView(rec: NetContainer): NetworkView {
    const c = this.d.state.container(rec.Id) ?? { id: rec.Id, attachments: attachmentsOrNone(this.d.state, rec.HostConfig, rec.Config) };
    return buildContainerView(rec, c, (id) => this.d.state.network(id), this.d.config().bridge ?? '');
  }

  viewGeneration(rec: NetContainer): string {
    return this.d.state.viewGeneration(rec.Id);
  }

  /** Names and IDs of the networks a container is configured for (the `network` ps filter). */
  networksOf(rec: NetContainer): string[] {
    const c = this.d.state.container(rec.Id);
    if (!c) return [rec.HostConfig.NetworkMode ?? 'bridge'];
    return c.attachments.flatMap((a) => [this.d.state.network(a.networkId)?.Name ?? a.name, a.networkId]).filter(Boolean);
  }
}
