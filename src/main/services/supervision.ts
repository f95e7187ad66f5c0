// containerd (ours, or the one --supervisor names), the images in it, the snapshotter of the storage
// driver, and distribution (pull, push, registries).
import { join } from 'node:path';
import { snapshotterFor } from '../../daemon/storage-driver.ts';
import { DistributionService } from '../../images/distribution/service.ts';
import { ImageStore } from '../../images/image-store.ts';
import { Supervisor } from '../../supervisor/supervisor.ts';
import { reachProxySnapshotter } from '../../supervisor/snapshotter/reach.ts';
import type { DaemonService, Services } from './types.ts';

/** containerd's content directory when the daemon runs its own containerd: some writes go there directly. */
export function contentRoot({ options, supervisor }: Pick<Services, 'options' | 'supervisor'>): string | undefined {
  return supervisor.managed ? join(options.roots.dataRoot, 'containerd', 'io.containerd.content.v1.content') : undefined;
}

/**
 * The snapshotter engined.ts started before containerd (fuse-overlayfs driver), listed before the
 * supervisor so that shutdown closes it only once containerd has stopped.
 */
export const snapshotServerService: DaemonService<'snapshotServer'> = {
  id: 'snapshotServer',
  init: ({ options }) => options.snapshotServer,
  stop: (server) => server?.close(),
};

export const supervisorService: DaemonService<'supervisor'> = {
  id: 'supervisor',
  init: ({ config, options, log }) => {
    const c = config();
    return Supervisor.start({
      ...(c.supervisor ? { address: c.supervisor } : {}),
      dataRoot: options.roots.dataRoot,
      execRoot: options.roots.execRoot,
      namespace: c['supervisor-namespace'],
      pluginsNamespace: c['supervisor-plugins-namespace'],
      cri: c['cri-supervisor'],
      log,
      ...(options.containerd ? { prestarted: options.containerd } : {}),
    });
  },
  // With live-restore containerd outlives the daemon, so running containers keep their shims,
  // Wait calls and events; the next daemon adopts it.
  stop: async (supervisor, { config }) => {
    if (config()['live-restore'] && supervisor.managed) {
      await supervisor.reapOrphanShims();
      supervisor.client.close();
      supervisor.managed.release();
    } else {
      await supervisor.stop();
    }
  },
};

export const imagesService: DaemonService<'images'> = {
  id: 'images',
  requires: ['supervisor'],
  init: ({ supervisor }) => new ImageStore(supervisor.client),
};

/** Warms the image cache (and /info's image count) while the rest is built; the listeners open after it. */
export const imagesWarmService: DaemonService<'imagesWarm'> = {
  id: 'imagesWarm',
  requires: ['images'],
  init: ({ images, log }) => ({
    done: images.list().catch((err: Error) => {
      log.debug('image list at start-up failed; the first API call lists again', { error: err.message });
      return [];
    }),
  }),
};

export const snapshotterService: DaemonService<'snapshotter'> = {
  id: 'snapshotter',
  requires: ['supervisor'],
  init: async ({ supervisor, config, options, log }) => {
    const name = await snapshotterFor(supervisor.client, config()['storage-driver'], config()['storage-opts'], options.roots.dataRoot);
    // An adopted containerd's connection to our snapshotter died with the previous daemon.
    if (options.snapshotServer && supervisor.managed?.adopted) {
      const attempts = await reachProxySnapshotter(supervisor.client, name);
      log.debug('containerd reaches the fuse-overlayfs snapshotter again', { attempts });
    }
    return name;
  },
};

export const distributionService: DaemonService<'distribution'> = {
  id: 'distribution',
  requires: ['supervisor', 'images', 'snapshotter', 'events'],
  init: (deps) => {
    const { supervisor, images, snapshotter, config, log, events, env } = deps;
    const root = contentRoot(deps);
    const distribution = new DistributionService({
      client: supervisor.client,
      images,
      snapshotter,
      config,
      log: log.child({ module: 'distribution' }),
      events,
      // Our own containerd: downloads land directly in its content directory (see blob-writer.ts).
      ...(root ? { contentRoot: root } : {}),
      // Layers unpacked while they download, on worker threads (stage-pool.ts, staged-unpack.ts),
      // unless ENGINE_PULL_UNPACK=service; the workers send the layers' GETs themselves
      // (worker-fetch.ts) unless ENGINE_PULL_FETCH=main.
      ...(env.ENGINE_PULL_UNPACK === 'service' ? { stageLayers: false } : {}),
      ...(env.ENGINE_PULL_FETCH === 'main' ? { workerFetch: false } : {}),
    });
    distribution.dropStaleLeases().catch((err: Error) => log.debug('dropping stale pull leases failed', { error: err.message }));
    return distribution;
  },
  stop: (distribution) => distribution.close(),
};
