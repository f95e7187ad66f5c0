// Volume plugins (`docker volume create -d <plugin>`, `--volume-driver`): the VolumeDriver protocol
// — Create, Remove, Mount, Unmount, Path, Get, List, Capabilities — over the plugin client. Each
// call's `Err` becomes an error naming the call, as dockerd words it.
import { EngineError } from '../errors.ts';
import type { PluginClient } from './client.ts';
import type { PluginRegistry } from './registry.ts';

export interface PluginVolume {
  Name: string;
  Mountpoint?: string;
  CreatedAt?: string;
  Status?: Record<string, unknown>;
}

export class VolumePluginClient {
  private scope?: 'local' | 'global';

  constructor(private readonly plugin: PluginClient) {}

  get client(): PluginClient {
    return this.plugin;
  }

  get name(): string {
    return this.plugin.name;
  }

  private async call<T extends { Err?: string }>(method: string, body: Record<string, unknown>): Promise<T> {
    const r = await this.plugin.call<T>(`VolumeDriver.${method}`, body);
    if (r.Err) throw new EngineError('INTERNAL', `VolumeDriver.${method}: ${r.Err}`);
    return r;
  }

  async create(name: string, opts: Record<string, string> | null): Promise<void> {
    await this.call('Create', { Name: name, Opts: opts ?? {} });
  }

  async remove(name: string): Promise<void> {
    await this.call('Remove', { Name: name });
  }

  /** Mounts the volume for one user (`id`, unique per mount); returns the host path to bind. */
  async mount(name: string, id: string): Promise<string> {
    const r = await this.call<{ Mountpoint?: string; Err?: string }>('Mount', { Name: name, ID: id });
    if (!r.Mountpoint) throw new EngineError('INTERNAL', `VolumeDriver.Mount: plugin ${this.name} returned no mount point for ${name}`);
    return this.scoped(r.Mountpoint);
  }

  async unmount(name: string, id: string): Promise<void> {
    await this.call('Unmount', { Name: name, ID: id });
  }

  async path(name: string): Promise<string> {
    const mp = (await this.call<{ Mountpoint?: string; Err?: string }>('Path', { Name: name })).Mountpoint ?? '';
    return mp ? this.scoped(mp) : mp;
  }

  async get(name: string): Promise<PluginVolume | undefined> {
    const v = (await this.call<{ Volume?: PluginVolume; Err?: string }>('Get', { Name: name })).Volume;
    return v?.Mountpoint ? { ...v, Mountpoint: this.scoped(v.Mountpoint) } : v;
  }

  /** A managed plugin answers paths inside its rootfs; the host path is under the plugin's directory. */
  private scoped(path: string): string {
    return this.plugin.address.scopePath ? this.plugin.address.scopePath(path) : path;
  }

  async list(): Promise<PluginVolume[]> {
    return (await this.call<{ Volumes?: PluginVolume[]; Err?: string }>('List', {})).Volumes ?? [];
  }

  /** The driver's scope (local unless it says global); asked once. */
  async capabilities(): Promise<'local' | 'global'> {
    if (!this.scope) {
      // Older plugins do not implement Capabilities: they are local, as dockerd assumes.
      const r = await this.plugin
        .call<{ Capabilities?: { Scope?: string } }>('VolumeDriver.Capabilities', {})
        .catch(() => ({}) as { Capabilities?: { Scope?: string } });
      this.scope = r.Capabilities?.Scope === 'global' ? 'global' : 'local';
    }
    return this.scope;
  }
}

/** Volume drivers by name, from the plugin registry. */
export class VolumePlugins {
  private readonly clients = new Map<string, VolumePluginClient>();

  constructor(private readonly registry: PluginRegistry) {}

  async driver(name: string): Promise<VolumePluginClient> {
    let plugin: PluginClient;
    try {
      plugin = await this.registry.get(name, 'VolumeDriver');
    } catch (err) {
      // The lookup's own verdict stands (an invalid name is a 400, an unknown plugin a 404).
      throw new EngineError(
        err instanceof EngineError ? err.code : 'INTERNAL',
        `error looking up volume plugin ${name}: ${(err as Error).message}`,
      );
    }
    // The registry hands out one client per plugin while it lives; a new one (a managed plugin
    // enabled again, a plugin located afresh) gets a new driver, which asks its scope again.
    let c = this.clients.get(name);
    if (!c || c.client !== plugin) {
      c = new VolumePluginClient(plugin);
      this.clients.set(name, c);
    }
    return c;
  }
}
