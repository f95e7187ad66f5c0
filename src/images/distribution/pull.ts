// Pulling one image reference into containerd, pipelined: layers download in parallel
// (max-concurrent-downloads, each with max-download-attempts and backoff) straight into the content
// store, and each layer is unpacked through the diff service into a snapshot named by its chainID
// as soon as it and its parent are ready, while later layers still download. Everything is written
// under one lease and the image record is created last, so an interrupted pull leaves nothing
// listed and its partial content is garbage-collected. The steps are their own modules:
// pull-resolve.ts (manifest), pull-content.ts (config, held and final content), layer-download.ts
// and layer-unpack.ts; this file plans the layers and runs the steps in order.
import { randomBytes } from 'node:crypto';
import { rm } from 'node:fs/promises';
import { EngineError, internal } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import { chainIds, type ImageStore } from '../image-store.ts';
import { setName } from '../image-write.ts';
import { familiarName, familiarString, referenceString, type Reference } from '../../util/image-reference.ts';
import type { AuthConfig, ProgressSink } from '../../types/distribution.ts';
import { canFallBack } from './errors.ts';
import type { Descriptor, Platform } from './media.ts';
import { itemStatus, shortId } from './progress.ts';
import { RegistrySession } from './registry-client.ts';
import type { Endpoint, RegistryHosts } from './registry-hosts.ts';
import { Semaphore } from './shared.ts';
import { LayerDownloads, type LayerDownloadSettings } from './layer-download.ts';
import { isPresent, LayerUnpacker, type LayerJob } from './layer-unpack.ts';
import { checkPlatform, describePullError, resolveManifest, type Resolved } from './pull-resolve.ts';
import type { StagedLayer } from './stage/staged-unpack.ts';
import type { RegistryTransport } from './transport.ts';
import { PullContent } from './pull-content.ts';
import { warmStageWorker } from './stage/stage-pool.ts';

export const PULL_LEASE_LABEL = 'engine.pull';
const LEASE_EXPIRE_MS = 24 * 3600_000;

export interface PullDeps extends LayerDownloadSettings {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  hosts: RegistryHosts;
  transport: RegistryTransport;
  log: Logger;
  /** Identifies this daemon process on its leases (stale ones from a previous run are dropped). */
  instance: string;
}

export interface PullResult {
  /** sha256 of the config: the image ID. */
  id: string;
  /** Digest of what the reference resolved to (index or manifest). */
  digest: string;
  recordName: string;
  /** Whether the reference now points at different content than before. */
  updated: boolean;
}

/** Milestones of one layer (ms since the pull started), logged at debug level when the pull ends. */
type LayerTimes = Record<string, number>;

/** The record name for a reference: a digest wins over a tag. */
export function recordNameFor(ref: Reference): string {
  return referenceString(ref.digest ? { domain: ref.domain, path: ref.path, digest: ref.digest } : ref);
}

export class Puller {
  private readonly ref: Reference;
  private readonly familiarRef: string;
  private readonly familiarRepo: string;
  private lease = '';
  private readonly ingestPrefix = `pull-${randomBytes(6).toString('hex')}`;
  private readonly abort = new AbortController();
  private readonly t0 = performance.now();
  private readonly times = new Map<string, LayerTimes>();
  /** Layers unpacked while they downloaded (staged-unpack.ts), by blob digest, until renamed into their snapshot. */
  private readonly staged = new Map<string, StagedLayer>();

  constructor(
    private readonly deps: PullDeps,
    ref: Reference,
    private readonly auth: AuthConfig,
    private readonly platform: Platform | undefined,
    private readonly sink: ProgressSink,
    private readonly signal: AbortSignal,
  ) {
    this.ref = ref.digest ? { domain: ref.domain, path: ref.path, digest: ref.digest } : ref;
    this.familiarRef = familiarString(this.ref);
    this.familiarRepo = familiarName(this.ref);
    if (signal.aborted) this.abort.abort(signal.reason);
    else signal.addEventListener('abort', () => this.abort.abort(signal.reason), { once: true });
  }

  /** Notes a milestone of a layer for the debug timeline. */
  private mark(digest: string, what: string): void {
    let t = this.times.get(digest);
    if (!t) this.times.set(digest, (t = {}));
    t[what] = Math.round(performance.now() - this.t0);
  }

  private get client(): SupervisorClient {
    return this.deps.client;
  }

  /** Resolves the manifest on the first endpoint that answers (mirrors, then the registry). */
  async run(): Promise<PullResult> {
    const endpoints = await this.deps.hosts.endpoints(this.ref.domain, { mirrors: true });
    for (let i = 0; i < endpoints.length; i++) {
      const ep = endpoints[i]!;
      const session = new RegistrySession(this.deps.transport, ep, this.auth, [`repository:${this.ref.path}:pull`]);
      let resolved: Resolved;
      try {
        resolved = await this.resolve(session);
      } catch (err) {
        if (this.abort.signal.aborted) throw err;
        const last = i === endpoints.length - 1;
        if (!last && canFallBack(err, ep.mirror)) {
          this.deps.log.info(`attempting next endpoint for pull after error: ${(err as Error).message}`, { endpoint: ep.url });
          continue;
        }
        throw this.describe(err, ep);
      }
      try {
        return await this.fetchAndUnpack(session, resolved);
      } catch (err) {
        throw this.describe(err, ep);
      }
    }
    throw internal(`no endpoint to pull ${this.familiarRef} from`);
  }

  private describe(err: unknown, ep: Endpoint): EngineError {
    return describePullError(err, ep, this.signal.aborted, this.familiarRef, this.familiarRepo);
  }

  private resolve(session: RegistrySession): Promise<Resolved> {
    const target = {
      path: this.ref.path,
      tagOrDigest: this.ref.digest ?? this.ref.tag!,
      familiarRef: this.familiarRef,
      platform: this.platform,
    };
    return resolveManifest(session, target, this.abort.signal);
  }

  private async fetchAndUnpack(session: RegistrySession, r: Resolved): Promise<PullResult> {
    const { client } = this;
    const signal = this.abort.signal;
    const recordName = recordNameFor(this.ref);
    // dockerd names the repository by its path inside the registry: "Pulling from library/busybox".
    this.sink({ status: `Pulling from ${this.ref.path}`, id: this.ref.digest ?? this.ref.tag! });

    const lease = await client.leases.create({ expireMs: LEASE_EXPIRE_MS, labels: { [PULL_LEASE_LABEL]: this.deps.instance } });
    this.lease = lease.id;
    const at = { domain: this.ref.domain, path: this.ref.path, lease: this.lease, ingestPrefix: this.ingestPrefix, signal };
    const content = new PullContent(client, at, () => this.deps.limits().maxDownloadAttempts, this.deps.log);
    const mark = (digest: string, what: string) => this.mark(digest, what);
    const downloads = new LayerDownloads(this.deps, { ...at, sink: this.sink, mark }, this.staged);
    const unpacker = new LayerUnpacker(
      client,
      this.deps.snapshotter,
      this.deps.log,
      {
        lease: this.lease,
        signal,
        sink: this.sink,
        mark,
        hold: (id, type) => content.hold(id, type),
        cancel: (why) => this.abort.abort(why),
      },
      this.staged,
    );
    try {
      const previous = await client.images.get(recordName).catch(() => null); // No previous record under that name: a first pull.
      if (previous?.target.digest !== r.top.digest && this.deps.contentRoot && this.deps.workerFetch !== false) warmStageWorker();
      const config = await content.fetchConfig(session, r.parsed.config);
      const diffIds = config.parsed.rootfs?.diff_ids ?? [];
      if (diffIds.length !== r.parsed.layers.length) throw internal(`layers from manifest don't match image configuration`);
      checkPlatform(r, config.parsed, this.platform, this.familiarRef);
      const chain = chainIds(diffIds);
      const jobs = await this.planLayers(session, content, downloads, r.parsed.layers, diffIds, chain);
      await unpacker.unpack(jobs);

      await content.storeImage(r, config.bytes, chain, this.deps.snapshotter);
      signal.throwIfAborted();
      const updated = previous?.target.digest !== r.top.digest;
      if (updated) {
        // Like every other writer of names: an image losing its last name this way stays, dangling.
        await setName(
          client,
          this.deps.images,
          recordName,
          { media_type: r.top.mediaType, digest: r.top.digest, size: String(r.top.bytes.length) },
          {},
        );
        // Refreshes the count /info shows; a failing listing reports itself at the next one.
        await this.deps.images.list().catch((err: Error) => this.deps.log.debug(`image count refresh after a pull: ${err.message}`));
      }
      this.sink({ status: `Digest: ${r.top.digest}` });
      this.sink({
        status:
          updated || downloads.downloadedAny
            ? `Status: Downloaded newer image for ${this.familiarRef}`
            : `Status: Image is up to date for ${this.familiarRef}`,
      });
      return { id: r.parsed.config.digest, digest: r.top.digest, recordName, updated };
    } finally {
      this.abort.abort(new Error('pull finished'));
      for (const [digest, t] of this.times) this.deps.log.debug(`pull timeline ${shortId(digest)}: ${JSON.stringify(t)}`);
      await Promise.all([...this.staged.values()].map((l) => rm(l.dir, { recursive: true, force: true }).catch(() => undefined))); // Staged trees no snapshot took (a failed pull, a layer unpacked meanwhile by another pull); one rm cannot remove is swept at the next start.
      this.staged.clear();
      await client.leases
        .delete(this.lease)
        .catch((err) => this.deps.log.warn(`could not delete pull lease ${this.lease}: ${(err as Error).message}`));
    }
  }

  /** Decides per layer: already there, or download (scheduled with the concurrency limit). */
  private async planLayers(
    session: RegistrySession,
    content: PullContent,
    downloader: LayerDownloads,
    layers: Descriptor[],
    diffIds: string[],
    chain: string[],
  ): Promise<LayerJob[]> {
    const jobs: LayerJob[] = [];
    const downloads = new Map<string, Promise<void>>();
    const sem = new Semaphore(() => this.deps.limits().maxConcurrentDownloads);
    for (let i = 0; i < layers.length; i++) {
      const desc = layers[i]!;
      const id = shortId(desc.digest);
      const snapshotPresent = await isPresent(() => this.client.snapshots.stat(chain[i]!, { snapshotter: this.deps.snapshotter }));
      const blobPresent = downloads.has(desc.digest) || (await isPresent(() => this.client.contentInfo(desc.digest)));
      if (blobPresent) {
        if (!downloads.has(desc.digest)) {
          await content.hold(desc.digest, 'content');
          await content.noteSource(desc.digest);
        }
        if (snapshotPresent) {
          await content.hold(chain[i]!, `snapshots/${this.deps.snapshotter}`);
          this.sink(itemStatus(id, 'Already exists'));
        } else this.sink(itemStatus(id, 'Pulling fs layer'));
        jobs.push({
          desc,
          diffId: diffIds[i]!,
          chainId: chain[i]!,
          id,
          blob: downloads.get(desc.digest) ?? Promise.resolve(),
          snapshotPresent,
          alreadyExists: snapshotPresent,
        });
        continue;
      }
      this.sink(itemStatus(id, 'Pulling fs layer'));
      const blob = downloader.download(session, sem, desc, diffIds[i]!, id);
      blob.catch(() => undefined); // awaited in unpack order; a failure there cancels the rest
      downloads.set(desc.digest, blob);
      jobs.push({ desc, diffId: diffIds[i]!, chainId: chain[i]!, id, blob, snapshotPresent, alreadyExists: false });
    }
    return jobs;
  }
}
