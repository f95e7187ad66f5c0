// Image operations over the stored images (list, inspect, tag, remove, prune, commit, import, save,
// load) and the classic builder, whose RUN steps are containers of the containers service and whose
// cache is in engine.db; the builder's modules load on its first use (build-lazy.ts).
import { ImageService } from '../../images/image-service.ts';
import { lazyBuildService } from '../build-lazy.ts';
import { contentRoot } from './supervision.ts';
import type { DaemonService, Services } from './types.ts';

/** Where commit and the builder's file steps write layers: beside containerd's blobs (ENGINE_COMMIT_DIFF=upper) unless told otherwise. */
function layerWriteRoot(deps: Pick<Services, 'options' | 'supervisor' | 'env'>): { contentRoot: string } | object {
  const root = deps.env.ENGINE_COMMIT_DIFF === 'service' ? undefined : contentRoot(deps);
  return root ? { contentRoot: root } : {};
}

export const imageServiceService: DaemonService<'imageService'> = {
  id: 'imageService',
  requires: ['supervisor', 'images', 'snapshotter', 'containers', 'rootfs', 'events'],
  init: (deps) => {
    const { supervisor, images, snapshotter, containers, rootfs, options, log, config, events } = deps;
    const service = new ImageService({
      client: supervisor.client,
      images,
      snapshotter,
      containers,
      rootfs,
      tmpDir: options.roots.tmpDir,
      log: log.child({ module: 'images' }),
      ...layerWriteRoot(deps),
      driver: config()['storage-driver'] || 'overlay2',
      events,
      containerEvent: (id, action, attributes) => containers.publishEvent(id, action, attributes),
    });
    service.start();
    return service;
  },
  stop: (service) => service.stop(),
};

export const builderService: DaemonService<'builder'> = {
  id: 'builder',
  requires: ['db', 'supervisor', 'images', 'imageService', 'distribution', 'containers', 'snapshotter', 'metrics'],
  init: (deps) => {
    const { db, supervisor, images, imageService, distribution, containers, snapshotter, options, log, config, metrics } = deps;
    return lazyBuildService({
      db,
      client: supervisor.client,
      images,
      imageService,
      distribution,
      containers,
      snapshotter,
      tmpDir: options.roots.tmpDir,
      ...layerWriteRoot(deps),
      log: log.child({ module: 'build' }),
      builderConfig: () => config().builder,
      ...(metrics ? { metrics: metrics.builds } : {}),
    });
  },
};
