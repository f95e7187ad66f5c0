// The classic builder wired to the services it runs on: RUN steps become containers of the
// container service (networking, limits and clean-up as for `docker run`), base images come from
// the image store or a pull, tags go through the image service (events included), and pruned
// cache removes intermediate images through it too. Kept out of compose.ts to keep that short, and
// loaded only on the builder's first use (build-lazy.ts).
import type { Logger } from '../util/log.ts';
import { API_VERSION } from '../util/api-version.ts';
import { isNotFound, EngineError } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { EngineDatabase } from '../store/database.ts';
import { BuildCacheTable } from '../store/build-cache.ts';
import type { ImageStore } from '../images/image-store.ts';
import type { ImageService } from '../images/image-service.ts';
import type { DistributionService } from '../images/distribution/service.ts';
import type { ContainerService } from '../daemon/containers/service.ts';
import { BuildService } from '../build/service.ts';
import { CopySteps } from '../build/copy-steps.ts';
import { gcSettings } from '../build/gc-config.ts';
import type { BuildContainers, BaseImages, BuildMetrics } from '../build/deps.ts';
import type { ContainerCreateBody } from '../types/container-api.ts';
import type { BuildMessage } from '../types/build.ts';

function stepContainers(containers: ContainerService, log: Logger): BuildContainers {
  return {
    async create(spec) {
      const body = {
        Image: spec.image,
        Cmd: spec.cmd,
        Entrypoint: [],
        Env: spec.env,
        User: spec.user,
        WorkingDir: spec.workingDir,
        AttachStdout: true,
        AttachStderr: true,
        HostConfig: spec.hostConfig,
      } as unknown as ContainerCreateBody;
      const { Id } = await containers.create(body, undefined, API_VERSION);
      const snap = await containers.snapshotOf(Id);
      return { id: Id, snapshotKey: snap.snapshotKey, snapshotter: snap.snapshotter };
    },
    async run(id, output, signal) {
      const session = await containers.attach(id, { stream: true, stdin: false, stdout: true, stderr: true, logs: false });
      let ended!: () => void;
      const outputEnded = new Promise<void>((r) => (ended = r));
      const unsubscribe = session.subscribe((chunk) => (chunk ? output(chunk.data, chunk.stream) : ended()));
      const exited = (await containers.wait(id, 'next-exit'))();
      const kill = () =>
        void containers.kill(id, 'SIGKILL').catch((err) => log.debug(`killing build container ${id}: ${(err as Error).message}`));
      signal.addEventListener('abort', kill, { once: true });
      try {
        await containers.start(id);
        const { StatusCode } = await exited;
        // The output's end comes with the exit; a moment's grace for the last bytes in flight.
        await Promise.race([outputEnded, new Promise((r) => setTimeout(r, 2000).unref())]);
        return StatusCode;
      } finally {
        signal.removeEventListener('abort', kill);
        unsubscribe();
      }
    },
    async remove(id) {
      await containers.remove(id, { force: true, volumes: true, link: false });
    },
  };
}

function baseImages(images: ImageStore, distribution: DistributionService): BaseImages {
  return {
    async find(ref) {
      try {
        return await images.resolve(ref);
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw err;
      }
    },
    pull: (ref, platform, auth, sink, signal) =>
      distribution.pull({ fromImage: ref, ...(platform ? { platform } : {}), auth }, (m) => sink(m as BuildMessage), signal),
  };
}

/** What the builder is built from (compose.ts hands it to build-lazy.ts, which builds on first use). */
export interface BuildWiring {
  db: EngineDatabase;
  client: SupervisorClient;
  images: ImageStore;
  imageService: ImageService;
  distribution: DistributionService;
  containers: ContainerService;
  snapshotter: string;
  tmpDir: string;
  /** containerd's content directory when the daemon runs its own (see images/commit-fast.ts). */
  contentRoot?: string;
  log: Logger;
  builderConfig: () => Record<string, unknown> | undefined;
  /** Build counts for --metrics-addr. */
  metrics?: BuildMetrics;
}

export function buildService(o: BuildWiring): BuildService {
  return new BuildService({
    client: o.client,
    images: o.images,
    snapshotter: o.snapshotter,
    tmpDir: o.tmpDir,
    ...(o.contentRoot ? { contentRoot: o.contentRoot } : {}),
    log: o.log,
    containers: stepContainers(o.containers, o.log),
    base: baseImages(o.images, o.distribution),
    cacheTable: new BuildCacheTable(o.db),
    tag: (id, repo, tag) => o.imageService.tag(id, repo, tag),
    removeImage: async (id) => {
      try {
        await o.imageService.remove(id, { force: false, noprune: true });
        return true;
      } catch (err) {
        // A child image, a container or a name still holds it: the image stays, only the cache entry goes.
        if (err instanceof EngineError && (err.code === 'CONFLICT' || err.code === 'NOT_FOUND')) return false;
        throw err;
      }
    },
    gcSettings: () => gcSettings(o.builderConfig(), o.tmpDir),
    fs: new CopySteps({ client: o.client, snapshotter: o.snapshotter, tmpDir: o.tmpDir }),
    platform: { os: 'linux', architecture: process.arch === 'x64' ? 'amd64' : process.arch },
    ...(o.metrics ? { metrics: o.metrics } : {}),
  });
}
