// The container records, managed plugins and volumes. Managed plugins (/plugins*) are containers
// in the plugins namespace with records and rootfs under <data-root>/plugins and sockets under
// <exec-root>/plugins/<id>/; they start before anything that may use them (volumes,
// authorization, log drivers) and stop after the containers. Their modules load only when plugins
// are recorded or first asked for (plugins-lazy.ts). Volumes keep their records in the store and
// their data under <data-root>/volumes; who uses a volume is read from the container records.
import { join } from 'node:path';
import type { ContainerRecord } from '../../daemon/containers/record.ts';
import { volumeUsers } from '../../daemon/containers/volume-users.ts';
import { pluginInUse } from '../../daemon/plugins/in-use.ts';
import { PluginFiles } from '../../daemon/plugins/store.ts';
import { VolumeService, type VolumeRecord } from '../../daemon/volumes/service.ts';
import { decodeAuthHeaderLenient } from '../../images/distribution/auth-config.ts';
import { PluginRegistry } from '../../plugins/registry.ts';
import { VolumePlugins } from '../../plugins/volume-driver.ts';
import { ContainerStore } from '../../store/containers.ts';
import { RecordTable } from '../../store/kv.ts';
import { lazyPluginManager } from '../plugins-lazy.ts';
import type { DaemonService } from './types.ts';

export const containerStoreService: DaemonService<'containerStore'> = {
  id: 'containerStore',
  requires: ['db'],
  init: ({ db }) => new ContainerStore<ContainerRecord>(db),
};

export const volumeTableService: DaemonService<'volumeTable'> = {
  id: 'volumeTable',
  requires: ['db'],
  init: ({ db }) => new RecordTable<VolumeRecord>(db, 'volumes'),
};

export const pluginsService: DaemonService<'plugins'> = {
  id: 'plugins',
  requires: ['supervisor', 'distribution', 'events', 'containerStore', 'volumeTable', 'cgroupDriver'],
  init: async ({ options, log, supervisor, distribution, events, containerStore, volumeTable, cgroupDriver }) => {
    const files = new PluginFiles(join(options.roots.dataRoot, 'plugins'));
    const plugins = lazyPluginManager(files, async () => {
      const [{ PluginManager }, { PluginRunner }] = await Promise.all([
        import('../../daemon/plugins/service.ts'),
        import('../../daemon/plugins/runner.ts'),
      ]);
      return new PluginManager({
        files,
        runner: new PluginRunner({
          client: supervisor.pluginsClient,
          files,
          socketsRoot: join(options.roots.execRoot, 'plugins'),
          runcRoot: supervisor.runcRoot,
          cgroupDriver,
          log: log.child({ module: 'plugins' }),
        }),
        registry: distribution,
        decodeAuth: decodeAuthHeaderLenient,
        log: log.child({ module: 'plugins' }),
        events,
        inUse: (name) =>
          pluginInUse(
            name,
            () => volumeTable.list(),
            () => containerStore.list(),
          ),
      });
    });
    await plugins.init();
    return plugins;
  },
  stop: (plugins, { config }) => plugins.shutdown(config()['live-restore']),
};

export const volumesService: DaemonService<'volumes'> = {
  id: 'volumes',
  requires: ['volumeTable', 'containerStore', 'plugins', 'events'],
  init: async ({ options, log, volumeTable, containerStore, plugins, events }) => {
    const volumes = new VolumeService({
      table: volumeTable,
      root: join(options.roots.dataRoot, 'volumes'),
      tmpDir: options.roots.tmpDir,
      log: log.child({ module: 'volumes' }),
      events,
      users: () => volumeUsers(containerStore.list()),
      // Volume plugins get dockerd's patience with a plugin that is still starting.
      plugins: new VolumePlugins(new PluginRegistry({ activationBudgetMs: 10_000, managed: plugins })),
      ...(options.userns ? { rootOwner: { uid: options.userns.rootUid, gid: options.userns.rootGid } } : {}),
    });
    await volumes.init();
    return volumes;
  },
};
