// Pushing local images to a registry: per layer HEAD (skip what the registry has), a cross-repository
// mount when the blob came from another repository of the same registry, otherwise a monolithic
// upload streamed from containerd's content store; max-concurrent-uploads at a time; then the
// config and the manifest, exactly the bytes stored locally (so the digest does not change).
import { createHash } from 'node:crypto';
import { createReadStream, existsSync } from 'node:fs';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { EngineError, internal, notFound } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import type { Logger } from '../../util/log.ts';
import type { ImageStore, LocalImage } from '../image-store.ts';
import { familiarName, repoName, type Reference } from '../../util/image-reference.ts';
import { isForeign } from './media.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import { itemStatus, ProgressThrottle, shortId } from './progress.ts';
import type { RegistrySession } from './registry-client.ts';
import { Semaphore } from './shared.ts';

export interface PushDeps {
  client: SupervisorClient;
  /** containerd's content directory when the daemon runs containerd: blobs are read from disk. */
  contentRoot?: string;
  limits: () => { maxConcurrentUploads: number };
  log: Logger;
}

interface Blob {
  mediaType: string;
  digest: string;
  size: number;
}

const SOURCE_LABEL = 'containerd.io/distribution.source.';

/**
 * The local images a push of `ref` sends: the tag asked for, or every local tag of the repository;
 * none at all is dockerd's 404.
 */
export async function imagesToPush(
  client: SupervisorClient,
  images: ImageStore,
  ref: Reference,
  tag: string | undefined,
): Promise<Array<{ tag: string; image: LocalImage }>> {
  const repo = repoName(ref);
  let tags: string[];
  if (tag || ref.tag) tags = [tag || ref.tag!];
  else {
    const records = await client.images.list();
    tags = records
      .map((r) => r.name)
      .filter((n) => n.startsWith(repo + ':') && !n.includes('@'))
      .map((n) => n.slice(repo.length + 1))
      .sort();
  }
  const out = [];
  for (const t of tags) {
    try {
      out.push({ tag: t, image: await images.resolve(`${repo}:${t}`) });
    } catch {
      // no such local image (a tag removed meanwhile, incomplete content): skipped; none left is the 404 below
    }
  }
  if (!out.length) throw notFound(`An image does not exist locally with the tag: ${familiarName(ref)}`);
  return out;
}

export class Pusher {
  private readonly sem: Semaphore;

  constructor(
    private readonly deps: PushDeps,
    private readonly session: RegistrySession,
    private readonly ref: Reference,
    private readonly sink: ProgressSink,
    private readonly signal: AbortSignal,
  ) {
    this.sem = new Semaphore(() => deps.limits().maxConcurrentUploads);
  }

  /** Pushes one local image under `tag`; returns the manifest digest and size. */
  async pushTag(tag: string, image: LocalImage): Promise<{ digest: string; size: number }> {
    const layers: Blob[] = image.manifest.layers.map((l) => ({ mediaType: l.media_type, digest: l.digest, size: Number(l.size) }));
    // dockerd lists the top layer first.
    const order = [...layers].reverse().filter((l, i, all) => all.findIndex((x) => x.digest === l.digest) === i);
    for (const l of order) this.sink(itemStatus(shortId(l.digest), 'Preparing'));
    const uploads = order.map((l) => this.pushLayer(l));
    const results = await Promise.allSettled(uploads);
    const failed = results.find((r) => r.status === 'rejected') as PromiseRejectedResult | undefined;
    if (failed) throw failed.reason;

    const cfg = image.manifest.config;
    await this.pushBlob({ mediaType: cfg.media_type, digest: cfg.digest, size: Number(cfg.size) }, null);

    const bytes = await this.deps.client.contentReadAll(image.manifestDigest);
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    let mediaType = 'application/vnd.oci.image.manifest.v1+json';
    try {
      mediaType =
        (JSON.parse(bytes.toString('utf8')) as { mediaType?: string }).mediaType ??
        (image.record.target.digest === digest ? image.record.target.media_type : mediaType);
    } catch {
      throw internal(`manifest ${image.manifestDigest} is not JSON`);
    }
    await this.session.putManifest(this.ref.path, tag, mediaType, bytes, this.signal);
    this.sink({ status: `${tag}: digest: ${digest} size: ${bytes.length}` });
    this.sink({ progressDetail: {}, aux: { Tag: tag, Digest: digest, Size: bytes.length } });
    return { digest, size: bytes.length };
  }

  private async pushLayer(layer: Blob): Promise<void> {
    const id = shortId(layer.digest);
    const release = await this.sem.acquire(() => this.sink(itemStatus(id, 'Waiting')), this.signal);
    try {
      if (isForeign(layer.mediaType)) {
        this.sink(itemStatus(id, 'Skipped foreign layer'));
        return;
      }
      const outcome = await this.pushBlob(layer, id);
      this.sink(itemStatus(id, outcome));
    } finally {
      release();
    }
  }

  /** HEAD → mount → upload; returns the status line dockerd shows for the outcome. */
  private async pushBlob(blob: Blob, id: string | null): Promise<string> {
    const { session, signal } = this;
    if ((await session.blobSize(this.ref.path, blob.digest, signal)) !== null) return 'Layer already exists';
    let location: string | undefined;
    const info = await this.deps.client.contentInfo(blob.digest).catch(() => null); // Content containerd does not know has no labels: the registry is asked instead.
    if (!info) throw new EngineError('NOT_FOUND', `blob ${blob.digest} of ${repoName(this.ref)} is not in the local content store`);
    const sources = (info.labels[SOURCE_LABEL + this.ref.domain] ?? '').split(',').filter((r) => r && r !== this.ref.path);
    for (const from of sources) {
      try {
        const m = await session.mountBlob(this.ref.path, blob.digest, from, signal);
        if (m.mounted) return `Mounted from ${from}`;
        location = m.location;
        break;
      } catch (err) {
        this.deps.log.debug(`cross-repository mount of ${blob.digest} from ${from} failed: ${(err as Error).message}`);
      }
    }
    location ??= await session.startUpload(this.ref.path, signal);
    const progress = id ? new ProgressThrottle(this.sink, id, 'Pushing') : null;
    const client = this.deps.client;
    const file = this.deps.contentRoot ? join(this.deps.contentRoot, 'blobs', 'sha256', blob.digest.replace(/^sha256:/, '')) : '';
    const direct = !!file && blob.digest.startsWith('sha256:') && existsSync(file);
    let sent = 0;
    async function* read(): AsyncIterable<Buffer> {
      const source: AsyncIterable<Buffer> = direct
        ? createReadStream(file, { highWaterMark: 1 << 20 })
        : client.contentRead(blob.digest, {}, { signal });
      for await (const chunk of source) {
        sent += chunk.length;
        progress?.update(sent, blob.size);
        yield chunk;
      }
      progress?.update(sent, blob.size, true);
    }
    await session.finishUpload(location, blob.digest, blob.size, Readable.from(read(), { objectMode: false }), signal);
    await this.recordSource(blob.digest, info.labels[SOURCE_LABEL + this.ref.domain]);
    return 'Pushed';
  }

  /** Notes the repository on the blob, so a later push to a sibling repository can mount it. */
  private async recordSource(digest: string, current: string | undefined): Promise<void> {
    const repos = new Set((current ?? '').split(',').filter(Boolean));
    if (repos.has(this.ref.path)) return;
    repos.add(this.ref.path);
    const key = SOURCE_LABEL + this.ref.domain;
    // The source label only speeds up later cross-repository mounts; the push does not depend on it.
    await this.deps.client
      .contentUpdate({ digest, labels: { [key]: [...repos].join(',') } }, [`labels.${key}`])
      .catch((err: Error) => this.deps.log.debug(`distribution source label of ${digest}: ${err.message}`));
  }
}
