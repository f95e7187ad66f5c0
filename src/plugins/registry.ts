// Plugins by name and capability: located once (discovery.ts), activated once, then reused. A
// plugin that disappears is located and activated again on the next use.
import { invalidParameter } from '../errors.ts';
import { PluginClient } from './client.ts';
import { DEFAULT_PLUGIN_DIRS, locatePlugin, type PluginDirs } from './discovery.ts';

export interface PluginRegistryOptions {
  dirs?: PluginDirs;
  /** How long a call may take (dockerd: 30 s for most plugin calls). */
  timeoutMs?: number;
  /** How long to wait for a starting plugin to answer its activation. */
  activationBudgetMs?: number;
}

export class PluginRegistry {
  private readonly active = new Map<string, { client: PluginClient; implements: string[] }>();

  constructor(private readonly opts: PluginRegistryOptions = {}) {}

  /** The plugin named (or at the path given), checked to implement `capability` ("authz", "VolumeDriver", …). */
  async get(nameOrPath: string, capability: string): Promise<PluginClient> {
    let entry = this.active.get(nameOrPath);
    if (!entry) {
      const address = await locatePlugin(nameOrPath, this.opts.dirs ?? DEFAULT_PLUGIN_DIRS);
      const client = new PluginClient(address, { timeoutMs: this.opts.timeoutMs ?? 30_000 });
      const implemented = await client.activate({ budgetMs: this.opts.activationBudgetMs ?? 30_000 });
      entry = { client, implements: implemented };
      this.active.set(nameOrPath, entry);
    }
    if (!entry.implements.includes(capability)) throw invalidParameter(`plugin ${entry.client.name} does not implement ${capability} (it implements ${entry.implements.join(', ') || 'nothing'})`);
    return entry.client;
  }

  /** Forgets a plugin so the next use locates and activates it again (after it failed). */
  forget(nameOrPath: string): void {
    this.active.delete(nameOrPath);
  }
}
