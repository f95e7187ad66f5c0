// Plugins by name and capability: managed plugins first (installed and enabled through /plugins, found
// through the lookup the composition root passes in), then plugins located by socket or spec file
// (discovery.ts), activated once and reused. A plugin that disappears is located and activated again
// on the next use.
import { invalidParameter } from '../errors.ts';
import { PluginClient } from './client.ts';
import { DEFAULT_PLUGIN_DIRS, locatePlugin, type PluginAddress, type PluginDirs } from './discovery.ts';

/** Enabled managed plugins, by name (with or without :latest) or id; declared here, served by the plugin manager. */
export interface ManagedPluginLookup {
  /** The plugin's address and the interfaces its config declares; undefined when no such plugin is enabled. */
  find(name: string): { address: PluginAddress; implements: string[] } | undefined;
  /** True when a managed plugin of that name is installed but disabled. */
  isDisabled(name: string): boolean;
  /** Names of the enabled managed plugins implementing an interface ("LogDriver", …), for /info. */
  enabledWith?(iface: string): string[];
}

export interface PluginRegistryOptions {
  dirs?: PluginDirs;
  /** How long a call may take (dockerd: 30 s for most plugin calls). */
  timeoutMs?: number;
  /** How long to wait for a starting plugin to answer its activation. */
  activationBudgetMs?: number;
  managed?: ManagedPluginLookup;
}

export class PluginRegistry {
  private readonly active = new Map<string, { client: PluginClient; implements: string[] }>();
  /** One client per enabled managed plugin (its address object lives as long as it stays enabled). */
  private readonly managedClients = new WeakMap<PluginAddress, PluginClient>();

  constructor(private readonly opts: PluginRegistryOptions = {}) {}

  /** The plugin named (or at the path given), checked to implement `capability` ("authz", "VolumeDriver", …). */
  async get(nameOrPath: string, capability: string): Promise<PluginClient> {
    const managed = this.opts.managed?.find(nameOrPath);
    if (managed) {
      // Managed plugins declare their interfaces in their config; dockerd does not activate them.
      if (!managed.implements.includes(capability))
        throw invalidParameter(
          `plugin ${managed.address.name} does not implement ${capability} (it implements ${managed.implements.join(', ') || 'nothing'})`,
        );
      let client = this.managedClients.get(managed.address);
      if (!client) {
        client = new PluginClient(managed.address, { timeoutMs: this.opts.timeoutMs ?? 30_000 });
        this.managedClients.set(managed.address, client);
      }
      return client;
    }
    let entry = this.active.get(nameOrPath);
    if (!entry) {
      const address = await locatePlugin(nameOrPath, this.opts.dirs ?? DEFAULT_PLUGIN_DIRS);
      const client = new PluginClient(address, { timeoutMs: this.opts.timeoutMs ?? 30_000 });
      const implemented = await client.activate({ budgetMs: this.opts.activationBudgetMs ?? 30_000 });
      entry = { client, implements: implemented };
      this.active.set(nameOrPath, entry);
    }
    if (!entry.implements.includes(capability))
      throw invalidParameter(
        `plugin ${entry.client.name} does not implement ${capability} (it implements ${entry.implements.join(', ') || 'nothing'})`,
      );
    return entry.client;
  }

  /** A managed plugin of that name is installed and disabled (dockerd then leaves it out of the authorization chain). */
  isDisabledManaged(name: string): boolean {
    return this.opts.managed?.isDisabled(name) ?? false;
  }

  /** Forgets a plugin so the next use locates and activates it again (after it failed). */
  forget(nameOrPath: string): void {
    this.active.delete(nameOrPath);
  }
}
