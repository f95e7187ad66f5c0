// Pulling one image reference into containerd, pipelined: layers download in parallel
// (max-concurrent-downloads, each with max-download-attempts and backoff) straight into the content
// store, and each layer is unpacked through the diff service into a snapshot named by its chainID
// as soon as it and its parent are ready, while later layers still download. Everything is written
// under one lease and the image record is created last, so an interrupted pull leaves nothing
// listed and its partial content is garbage-collected.
import { createHash, randomBytes } from 'node:crypto';
import { rename, rm } from 'node:fs/promises';
import { dirname } from 'node:path';
import { EngineError, internal, invalidParameter } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import { grpcCode, GrpcStatus } from '../../supervisor/errors.ts';
import type { Logger } from '../../util/log.ts';
import { chainIds, type ImageStore, type OciImageConfig } from '../image-store.ts';
import { setName } from '../image-write.ts';
import { DEFAULT_DOMAIN, familiarName, familiarString, referenceString, type Reference } from '../../util/image-reference.ts';
import type { AuthConfig, ProgressSink } from '../../types/distribution.ts';
import { canFallBack, insecureHint, retryable, translatePullError } from './errors.ts';
import {
  DEFAULT_PLATFORM,
  formatPlatform,
  isIndex,
  isLayer,
  isManifest,
  isSchema1,
  platformMatches,
  selectManifest,
  type Descriptor,
  type ImageIndex,
  type ImageManifest,
  type Platform,
} from './media.ts';
import { itemProgress, itemStatus, ProgressThrottle, shortId } from './progress.ts';
import { NotV2Error, RegistrySession, type FetchedManifest } from './registry-client.ts';
import { certsDir, type Endpoint, type RegistryHosts } from './registry-hosts.ts';
import { Semaphore } from './shared.ts';
import { writeBlob } from './blob-writer.ts';
import { warmStageWorker, writeBlobThreaded } from './stage-pool.ts';
import { stageable, type StagedLayer } from './staged-unpack.ts';
import { upperDirOf } from '../overlay-diff.ts';
import type { Mount } from '../../supervisor/types.ts';
import { TransportError, readAll, type RegistryTransport } from './transport.ts';

export const PULL_LEASE_LABEL = 'engine.pull';
const LEASE_EXPIRE_MS = 24 * 3600_000;

export interface PullDeps {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  hosts: RegistryHosts;
  transport: RegistryTransport;
  limits: () => { maxConcurrentDownloads: number; maxDownloadAttempts: number };
  log: Logger;
  /** Identifies this daemon process on its leases (stale ones from a previous run are dropped). */
  instance: string;
  /** containerd's content directory when the daemon manages containerd (see blob-writer.ts). */
  contentRoot?: string;
  /** Unpack layers while they download (staged-unpack.ts; the default); false: containerd's diff service after each download. */
  stageLayers?: boolean;
  /** The stage workers send the layers' GETs themselves (worker-fetch.ts; the default); false: the main thread receives. */
  workerFetch?: boolean;
  /** Seconds to wait before retry n (1-based); dockerd waits 5 s × n. */
  retryDelaySeconds?: (attempt: number) => number;
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

interface Resolved {
  top: FetchedManifest;
  manifest: FetchedManifest;
  parsed: ImageManifest;
  /** Position of the chosen manifest in the index (for its gc.ref label). */
  indexPosition?: number;
}

interface LayerJob {
  desc: Descriptor;
  diffId: string;
  chainId: string;
  id: string;
  /** Resolves once the blob is committed in the content store. */
  blob: Promise<void>;
  snapshotPresent: boolean;
  /** Reported as "Already exists": nothing to download or unpack. */
  alreadyExists: boolean;
}

/** Milestones of one layer (ms since the pull started), logged at debug level when the pull ends. */
type LayerTimes = Record<string, number>;

const sha256 = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/** The record name for a reference: a digest wins over a tag. */
export function recordNameFor(ref: Reference): string {
  return referenceString(ref.digest ? { domain: ref.domain, path: ref.path, digest: ref.digest } : ref);
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    const onAbort = () => {
      clearTimeout(t);
      reject(signal.reason ?? new Error('aborted'));
    };
    if (signal.aborted) return onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

export class Puller {
  private readonly ref: Reference;
  private readonly familiarRef: string;
  private readonly familiarRepo: string;
  private lease = '';
  private readonly ingestPrefix = `pull-${randomBytes(6).toString('hex')}`;
  private readonly abort = new AbortController();
  private downloadedAny = false;
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
    if (err instanceof TransportError && err.tlsProblem && !ep.insecure && !ep.mirror && ep.registry !== DEFAULT_DOMAIN) {
      return new EngineError('INTERNAL', err.message + insecureHint(ep.registry, certsDir()));
    }
    if (err instanceof NotV2Error) return new EngineError('INTERNAL', err.message);
    if (this.signal.aborted && !(err instanceof EngineError)) return new EngineError('INTERNAL', 'context canceled');
    return translatePullError(err, this.familiarRef, this.familiarRepo);
  }

  private async resolve(session: RegistrySession): Promise<Resolved> {
    const signal = this.abort.signal;
    const top = await session.getManifest(this.ref.path, this.ref.digest ?? this.ref.tag!, signal);
    if (isSchema1(top.mediaType)) {
      throw invalidParameter(
        `Docker Image Format v1 and Docker Image manifest version 2, schema 1 support has been removed. Suggest the author of ${this.familiarRef} to upgrade the image to the OCI Format or Docker Image manifest v2, schema 2.`,
      );
    }
    if (isIndex(top.mediaType)) {
      const index = JSON.parse(top.bytes.toString('utf8')) as ImageIndex;
      if (!Array.isArray(index.manifests)) throw internal(`${this.familiarRef}: malformed manifest list`);
      const want = this.platform ?? DEFAULT_PLATFORM;
      const desc = selectManifest(index, want);
      const manifest = await session.getManifest(this.ref.path, desc.digest, signal);
      if (manifest.bytes.length !== desc.size)
        throw internal(`manifest ${desc.digest}: size ${manifest.bytes.length} does not match the index (${desc.size})`);
      if (!isManifest(manifest.mediaType))
        throw invalidParameter(`unsupported manifest media type ${manifest.mediaType} in ${this.familiarRef}`);
      return { top, manifest, parsed: this.parseManifest(manifest), indexPosition: index.manifests.indexOf(desc) };
    }
    if (!isManifest(top.mediaType)) throw invalidParameter(`unsupported manifest media type ${top.mediaType} for ${this.familiarRef}`);
    return { top, manifest: top, parsed: this.parseManifest(top) };
  }

  private parseManifest(m: FetchedManifest): ImageManifest {
    const parsed = JSON.parse(m.bytes.toString('utf8')) as ImageManifest;
    if (!parsed.config?.digest || !Array.isArray(parsed.layers)) throw internal(`${this.familiarRef}: malformed image manifest`);
    for (const l of parsed.layers) {
      if (!isLayer(l.mediaType)) throw invalidParameter(`unsupported layer media type ${l.mediaType} in ${this.familiarRef}`);
      if (!/^sha256:[a-f0-9]{64}$/.test(l.digest)) throw invalidParameter(`unsupported layer digest ${l.digest} in ${this.familiarRef}`);
    }
    return parsed;
  }

  private async exists(fn: () => Promise<unknown>): Promise<boolean> {
    try {
      await fn();
      return true;
    } catch (err) {
      if (grpcCode(err) === GrpcStatus.NOT_FOUND) return false;
      throw err;
    }
  }

  /** Adds this repository to a blob's distribution-source label (what push uses for cross-repository mounts). */
  private async noteSource(digest: string): Promise<void> {
    const key = `containerd.io/distribution.source.${this.ref.domain}`;
    const info = await this.client.contentInfo(digest).catch(() => null); // Unknown content has no labels to extend: nothing to do.
    const repos = (info?.labels[key] ?? '').split(',').filter(Boolean);
    if (!info || repos.includes(this.ref.path)) return;
    // The source label only speeds up later cross-repository mounts; a pull does not depend on it.
    await this.client
      .contentUpdate({ digest, labels: { [key]: [...repos, this.ref.path].join(',') } }, [`labels.${key}`])
      .catch(() => undefined); // the label is an optimisation
  }

  /** Keeps something that is already there alive for the rest of the pull. */
  private async hold(id: string, type: string): Promise<void> {
    await this.client.call('leases', 'AddResource', { id: this.lease, resource: { id, type } }).catch(() => undefined); // Content already held by another lease or image stays anyway; this lease only guards against GC.
  }

  private async fetchAndUnpack(session: RegistrySession, r: Resolved): Promise<PullResult> {
    const { client } = this;
    const signal = this.abort.signal;
    const recordName = recordNameFor(this.ref);
    // dockerd names the repository by its path inside the registry: "Pulling from library/busybox".
    this.sink({ status: `Pulling from ${this.ref.path}`, id: this.ref.digest ?? this.ref.tag! });

    const lease = await client.leases.create({ expireMs: LEASE_EXPIRE_MS, labels: { [PULL_LEASE_LABEL]: this.deps.instance } });
    this.lease = lease.id;
    try {
      const previous = await client.images.get(recordName).catch(() => null); // No previous record under that name: a first pull.
      if (previous?.target.digest !== r.top.digest && this.deps.contentRoot && this.deps.workerFetch !== false) warmStageWorker();
      const config = await this.fetchConfig(session, r.parsed.config);
      const diffIds = config.parsed.rootfs?.diff_ids ?? [];
      if (diffIds.length !== r.parsed.layers.length) throw internal(`layers from manifest don't match image configuration`);
      if (
        this.platform &&
        r.top === r.manifest &&
        !platformMatches(
          {
            os: config.parsed.os ?? '',
            architecture: config.parsed.architecture ?? '',
            ...((config.parsed as { variant?: string }).variant ? { variant: (config.parsed as { variant?: string }).variant! } : {}),
          },
          this.platform,
        )
      ) {
        throw new EngineError(
          'NOT_FOUND',
          `image with reference ${this.familiarRef} was found but does not match the specified platform: wanted ${formatPlatform(this.platform)}, actual: ${config.parsed.os}/${config.parsed.architecture}`,
        );
      }
      const chain = chainIds(diffIds);
      const jobs = await this.planLayers(session, r.parsed.layers, diffIds, chain);
      await this.unpack(jobs);

      // Every layer is in: config, manifest, index, with the labels that keep them alive; then the record.
      const snapLabel = `containerd.io/gc.ref.snapshot.${this.deps.snapshotter}`;
      const top = chain[chain.length - 1];
      await this.store(config.bytes, r.parsed.config.digest, top ? { [snapLabel]: top } : {});
      const mLabels: Record<string, string> = { 'containerd.io/gc.ref.content.config': r.parsed.config.digest };
      r.parsed.layers.forEach((l, i) => {
        mLabels[`containerd.io/gc.ref.content.l.${i}`] = l.digest;
      });
      await this.store(r.manifest.bytes, r.manifest.digest, mLabels);
      if (r.top !== r.manifest) {
        await this.store(r.top.bytes, r.top.digest, { [`containerd.io/gc.ref.content.m.${r.indexPosition ?? 0}`]: r.manifest.digest });
      }
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
        await this.deps.images.list().catch(() => undefined); // refreshes the count /info shows
      }
      this.sink({ status: `Digest: ${r.top.digest}` });
      this.sink({
        status:
          updated || this.downloadedAny
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

  /** Writes a small blob we hold in memory (or merges labels into it when it is already there). */
  private async store(bytes: Buffer, digest: string, labels: Record<string, string>): Promise<void> {
    await this.client.contentWrite(`${this.ingestPrefix}-${digest}`, bytes, { expected: digest, lease: this.lease, labels });
  }

  private async fetchConfig(session: RegistrySession, desc: Descriptor): Promise<{ bytes: Buffer; parsed: OciImageConfig }> {
    let bytes: Buffer;
    if (await this.exists(() => this.client.contentInfo(desc.digest))) {
      await this.hold(desc.digest, 'content');
      bytes = await this.client.contentReadAll(desc.digest);
    } else {
      const attempts = Math.max(1, this.deps.limits().maxDownloadAttempts);
      for (let attempt = 1; ; attempt++) {
        try {
          const res = await session.getBlob(this.ref.path, desc.digest, this.abort.signal);
          bytes = await readAll(res.body, 32 << 20);
          break;
        } catch (err) {
          if (this.abort.signal.aborted || attempt >= attempts || !retryable(err)) throw err;
          await sleep(1000 * attempt, this.abort.signal);
        }
      }
    }
    if (bytes.length !== desc.size || sha256(bytes) !== desc.digest)
      throw internal(`image config verification failed for digest ${desc.digest}`);
    const parsed = JSON.parse(bytes.toString('utf8')) as OciImageConfig;
    return { bytes, parsed };
  }

  /** Decides per layer: already there, or download (scheduled with the concurrency limit). */
  private async planLayers(session: RegistrySession, layers: Descriptor[], diffIds: string[], chain: string[]): Promise<LayerJob[]> {
    const jobs: LayerJob[] = [];
    const downloads = new Map<string, Promise<void>>();
    const sem = new Semaphore(() => this.deps.limits().maxConcurrentDownloads);
    for (let i = 0; i < layers.length; i++) {
      const desc = layers[i]!;
      const id = shortId(desc.digest);
      const snapshotPresent = await this.exists(() => this.client.snapshots.stat(chain[i]!, { snapshotter: this.deps.snapshotter }));
      const blobPresent = downloads.has(desc.digest) || (await this.exists(() => this.client.contentInfo(desc.digest)));
      if (blobPresent) {
        if (!downloads.has(desc.digest)) {
          await this.hold(desc.digest, 'content');
          await this.noteSource(desc.digest);
        }
        if (snapshotPresent) {
          await this.hold(chain[i]!, `snapshots/${this.deps.snapshotter}`);
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
      const blob = this.download(session, sem, desc, diffIds[i]!, id);
      blob.catch(() => undefined); // awaited in unpack order; a failure there cancels the rest
      downloads.set(desc.digest, blob);
      jobs.push({ desc, diffId: diffIds[i]!, chainId: chain[i]!, id, blob, snapshotPresent, alreadyExists: false });
    }
    return jobs;
  }

  private async download(session: RegistrySession, sem: Semaphore, desc: Descriptor, diffId: string, id: string): Promise<void> {
    const signal = this.abort.signal;
    // The slot is given back once the bytes are in: their hashing and unpacking need no connection.
    let release: (() => void) | null = await sem.acquire(() => this.sink(itemStatus(id, 'Waiting')), signal);
    const received = () => {
      release?.();
      release = null;
    };
    try {
      const attempts = Math.max(1, this.deps.limits().maxDownloadAttempts);
      for (let attempt = 1; ; attempt++) {
        try {
          release ??= await sem.acquire(() => this.sink(itemStatus(id, 'Waiting')), signal);
          await this.downloadOnce(session, desc, diffId, id, received);
          this.downloadedAny = true;
          this.sink(itemStatus(id, 'Download complete'));
          return;
        } catch (err) {
          if (signal.aborted || attempt >= attempts || !retryable(err)) throw err;
          this.deps.log.warn(`download of ${desc.digest} failed (attempt ${attempt} of ${attempts}): ${(err as Error).message}`);
          const delay = this.deps.retryDelaySeconds?.(attempt) ?? 5 * attempt;
          for (let s = delay; s > 0; s--) {
            this.sink(itemStatus(id, `Retrying in ${s} second${s === 1 ? '' : 's'}`));
            await sleep(1000, signal);
          }
        }
      }
    } finally {
      received();
    }
  }

  private async downloadOnce(session: RegistrySession, desc: Descriptor, diffId: string, id: string, gotAll: () => void): Promise<void> {
    const signal = this.abort.signal;
    const labels: Record<string, string> = {
      'containerd.io/uncompressed': diffId,
      [`containerd.io/distribution.source.${this.ref.domain}`]: this.ref.path,
    };
    const ref = `${this.ingestPrefix}-${desc.digest}`;
    const { contentRoot } = this.deps;
    const threaded = !!contentRoot && desc.digest.startsWith('sha256:');
    const stage = threaded && this.deps.stageLayers !== false && this.deps.snapshotter === 'overlayfs' && stageable(desc.mediaType);
    const progress = new ProgressThrottle(this.sink, id, 'Downloading');
    const mark = (what: string) => this.mark(desc.digest, what);
    const allIn = () => {
      mark('received');
      gotAll();
      progress.update(desc.size, desc.size, true);
      this.sink(itemStatus(id, 'Verifying Checksum'));
    };
    const target = { client: this.client, lease: this.lease, contentRoot: contentRoot! };
    const stageAt = stage ? { root: dirname(contentRoot!), mediaType: desc.mediaType } : null;
    mark('request');
    if (threaded && this.deps.workerFetch !== false) {
      // The worker sends the GET itself (worker-fetch.ts); anything but a 200 is repeated below.
      const req = await session.blobRequest(this.ref.path, desc.digest, signal);
      const r = await this.verified(desc, () =>
        writeBlobThreaded(
          target,
          ref,
          desc.digest,
          desc.size,
          {
            fetch: { ...req, size: desc.size, digest: desc.digest },
            events: { response: () => mark('response'), progress: (n) => progress.update(n, desc.size), received: allIn },
            signal,
          },
          labels,
          stageAt,
        ),
      );
      if (!('status' in r)) return this.stored(desc, r, stage);
      this.deps.log.debug(`blob ${desc.digest}: the registry answered ${r.status} to the stage worker; asking again`);
    }
    const res = await session.getBlob(this.ref.path, desc.digest, signal);
    mark('response');
    const declared = res.headers['content-length'];
    if (declared !== undefined && Number(declared) !== desc.size) {
      res.body.destroy();
      throw internal(`blob ${desc.digest}: the registry sent ${declared} bytes, the manifest says ${desc.size}`);
    }
    let received = 0;
    async function* body(): AsyncIterable<Buffer> {
      try {
        for await (const chunk of res.body as AsyncIterable<Buffer>) {
          received += chunk.length;
          if (received > desc.size) throw new Error(`blob ${desc.digest}: more data than the ${desc.size} bytes announced`);
          progress.update(received, desc.size);
          yield chunk;
        }
      } catch (err) {
        const e = err as NodeJS.ErrnoException;
        if (e.code === 'ECONNRESET' || e.message === 'aborted') throw Object.assign(new Error('unexpected EOF'), { code: 'ECONNRESET' });
        throw err;
      }
      if (received !== desc.size) throw new Error('unexpected EOF');
      allIn();
    }
    if (threaded) {
      // Written, and unpacked when it can be, by a worker thread (stage-pool.ts).
      const r = await this.verified(desc, () => writeBlobThreaded(target, ref, desc.digest, desc.size, body(), labels, stageAt));
      if ('status' in r) throw internal(`blob ${desc.digest}: no result from the blob writer`); // only the worker's own GET answers a status
      return this.stored(desc, r, stage);
    }
    await this.verified(desc, () => writeBlob({ client: this.client, lease: this.lease }, ref, desc.digest, desc.size, body(), labels));
    mark('stored');
  }

  /** Runs a blob write; containerd's or our digest mismatch becomes dockerd's verification error. */
  private async verified<T>(desc: Descriptor, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (err) {
      if (grpcCode(err) === GrpcStatus.FAILED_PRECONDITION || /unexpected commit digest|digest mismatch/.test((err as Error).message)) {
        throw new EngineError('INTERNAL', `filesystem layer verification failed for digest ${desc.digest}`);
      }
      throw err;
    }
  }

  /** A blob written by a stage worker: its staged tree kept for the unpack, or why there is none. */
  private stored(desc: Descriptor, r: { staged: StagedLayer | null; reason?: string; refused?: boolean }, stage: boolean): void {
    this.mark(desc.digest, r.staged ? 'staged' : 'stored');
    // dockerd's words for a layer with an entry leading out of it ("failed to register layer: …").
    if (r.refused) throw new EngineError('INTERNAL', `failed to register layer: ${r.reason}`);
    if (r.staged) this.staged.set(desc.digest, r.staged);
    else if (stage) this.deps.log.debug(`layer ${desc.digest} goes through the diff service: ${r.reason}`);
  }

  /**
   * Moves a layer staged during its download onto the prepared snapshot's empty upper directory
   * (a rename on one filesystem); false when there is none, its diffID is not the configuration's
   * (the diff service then reports that) or the rename is not possible.
   */
  private async placeStaged(job: LayerJob, mounts: Mount[]): Promise<boolean> {
    const layer = this.staged.get(job.desc.digest);
    if (!layer || layer.diffId !== job.diffId) return false;
    const m = mounts.length === 1 ? mounts[0]! : undefined;
    const upper = m?.type === 'bind' ? m.source : upperDirOf(mounts);
    if (!upper) return false;
    try {
      await rename(layer.dir, upper); // replaces the empty directory containerd made
    } catch (err) {
      this.deps.log.debug(`staged layer ${job.desc.digest} not placed: ${(err as Error).message}`);
      return false;
    }
    this.staged.delete(job.desc.digest);
    return true;
  }

  /** Unpacks in chain order, each layer as soon as its blob is in (parents are committed first). */
  private async unpack(jobs: LayerJob[]): Promise<void> {
    const { client } = this;
    const snapshotter = this.deps.snapshotter;
    const signal = this.abort.signal;
    try {
      for (let i = 0; i < jobs.length; i++) {
        const job = jobs[i]!;
        await job.blob;
        this.mark(job.desc.digest, 'turn');
        if (job.alreadyExists) continue;
        if (job.snapshotPresent || (await this.exists(() => client.snapshots.stat(job.chainId, { snapshotter })))) {
          // Unpacked meanwhile (a concurrent pull of an image sharing the layer).
          await this.hold(job.chainId, `snapshots/${snapshotter}`);
          this.sink(itemStatus(job.id, 'Pull complete'));
          continue;
        }
        signal.throwIfAborted();
        this.sink(itemProgress(job.id, 'Extracting', 0, job.desc.size));
        const key = `extract-${randomBytes(6).toString('hex')}-${job.chainId}`;
        const parent = i > 0 ? jobs[i - 1]!.chainId : '';
        const mounts = await client.snapshots.prepare({ key, parent, snapshotter }, { lease: this.lease });
        this.mark(job.desc.digest, 'prepared');
        try {
          const applied = (await this.placeStaged(job, mounts))
            ? { digest: job.diffId }
            : await client.diff.apply({ media_type: job.desc.mediaType, digest: job.desc.digest, size: String(job.desc.size) }, mounts, {
                lease: this.lease,
                signal,
              });
          if (applied.digest !== job.diffId)
            throw internal(
              `failed to register layer: layer ${job.desc.digest} unpacked to ${applied.digest}, the image configuration says ${job.diffId}`,
            );
          this.mark(job.desc.digest, 'applied');
          await client.snapshots.commit({ name: job.chainId, key, snapshotter }, { lease: this.lease });
          this.mark(job.desc.digest, 'committed');
        } catch (err) {
          await client.snapshots.remove(key, { snapshotter }).catch(() => undefined); // The unpack already failed (reported below); the partial snapshot is under the pull's lease.
          if (grpcCode(err) !== GrpcStatus.ALREADY_EXISTS) throw err;
        }
        this.sink(itemProgress(job.id, 'Extracting', job.desc.size, job.desc.size));
        this.sink(itemStatus(job.id, 'Pull complete'));
      }
    } catch (err) {
      this.abort.abort(err);
      throw err;
    }
  }
}
