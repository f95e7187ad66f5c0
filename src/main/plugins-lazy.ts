// Managed plugins, loaded when there are some: a daemon with none recorded does not parse or run the
// plugin manager's modules at start-up. Its directories are prepared and its records read at once
// (a damaged record file still stops the start, as before); with records, the manager loads and
// starts the enabled plugins during start-up as it always did; without, the first /plugins request
// loads it. Until then no managed plugin exists, so the registry's lookups answer "none".
import { rm } from 'node:fs/promises';
import type { PluginsBackend } from '../api/routes/plugins.ts';
import type { ManagedPluginLookup } from '../plugins/registry.ts';
import type { PluginManager } from '../daemon/plugins/service.ts';
import type { PluginFiles } from '../daemon/plugins/store.ts';

export interface LazyPluginManager extends PluginsBackend, ManagedPluginLookup {
  init(): Promise<void>;
  shutdown(liveRestore: boolean): Promise<void>;
  enabledWith(iface: string): string[];
}

/** `make` imports and builds the manager (not yet initialised); it runs once, on first need. */
export function lazyPluginManager(files: PluginFiles, make: () => Promise<PluginManager>): LazyPluginManager {
  let loaded: PluginManager | undefined;
  let loading: Promise<PluginManager> | undefined;
  const manager = () =>
    (loading ??= make()
      .then(async (m) => {
        await m.init();
        loaded = m;
        return m;
      })
      .catch((err: unknown) => {
        loading = undefined; // the next request tries again
        throw err;
      }));
  return {
    async init() {
      // What the manager's own init does first, so the disk looks the same whether it loads or not.
      await rm(files.tmp(), { recursive: true, force: true });
      await files.init();
      if ((await files.load()).length > 0) await manager();
    },
    async shutdown(liveRestore) {
      const m = loaded ?? (loading ? await loading.catch(() => undefined) : undefined); // a failed load rejected its caller: nothing loaded to shut down
      await m?.shutdown(liveRestore);
    },
    find: (name) => loaded?.find(name),
    isDisabled: (name) => loaded?.isDisabled(name) ?? false,
    enabledWith: (iface) => loaded?.enabledWith(iface) ?? [],
    list: async (filters) => (await manager()).list(filters),
    inspect: async (name) => (await manager()).inspect(name),
    privileges: async (remote, registryAuth) => (await manager()).privileges(remote, registryAuth),
    install: async (remote, opts, sink, signal) => (await manager()).install(remote, opts, sink, signal),
    create: async (name, context) => (await manager()).create(name, context),
    enable: async (name, opts) => (await manager()).enable(name, opts),
    disable: async (name, opts) => (await manager()).disable(name, opts),
    configure: async (name, settings) => (await manager()).configure(name, settings),
    push: async (name, opts, sink, signal) => (await manager()).push(name, opts, sink, signal),
    remove: async (name, opts) => (await manager()).remove(name, opts),
  };
}
