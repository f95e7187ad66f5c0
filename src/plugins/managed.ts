// Managed (v2) plugins: the engine installs none yet. Listing answers an empty list and a named
// plugin is not found, as on a dockerd without plugins; installing or creating one says plainly
// that managed plugins are not built (501) instead of failing later in a client.
import { notFound, notImplemented } from '../errors.ts';
import type { PluginView } from '../types/plugins.ts';

const NOT_BUILT = 'managed plugins are not supported by this engine yet (plugins found by socket or spec file are used directly)';

export class NoManagedPlugins {
  async list(): Promise<PluginView[]> {
    return [];
  }

  async inspect(name: string): Promise<PluginView> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }

  async privileges(): Promise<unknown[]> {
    throw notImplemented(NOT_BUILT);
  }

  async install(_remote: string, opts: { upgradeOf?: string }): Promise<void> {
    if (opts.upgradeOf !== undefined) throw notFound(`plugin ${JSON.stringify(opts.upgradeOf)} not found`);
    throw notImplemented(NOT_BUILT);
  }

  async create(): Promise<void> {
    throw notImplemented(NOT_BUILT);
  }

  async enable(name: string): Promise<void> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }

  async disable(name: string): Promise<void> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }

  async configure(name: string): Promise<void> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }

  async push(name: string): Promise<void> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }

  async remove(name: string): Promise<PluginView> {
    throw notFound(`plugin ${JSON.stringify(name)} not found`);
  }
}
