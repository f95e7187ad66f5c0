// The classic builder's service (POST /build, /build/cancel, /build/prune, the BuildCache part of
// /system/df): the context is streamed into a temporary directory (never buffered whole), the
// Dockerfile read and parsed, the executor runs the stages, the result is tagged; the temporary
// directory and any step container go whatever happens. Running builds can be cancelled by the
// client's build ID or by the client hanging up. While a build runs, a concurrent major GC is asked
// for each time the heap grows 8 MiB (boundHeapGrowth): the per-file garbage of a large context
// otherwise piled up in the old generation (bench/build-memory.ts measures it).
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { rmSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join, posix } from 'node:path';
import { invalidParameter, isNotFound } from '../errors.ts';
import type { Logger } from '../util/log.ts';
import { runCommand } from '../util/helper-shell.ts';
import { boundHeapGrowth, collectInBackground, requestHeapTrim } from '../util/heap-trim.ts';
import { parseReference, familiarString } from '../util/image-reference.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { ImageStore } from '../images/image-store.ts';
import type { BuildCacheEntry, BuildOptions, BuildPruneOptions, BuildPruneResult, BuildSink } from '../types/build.ts';
import { extractContext } from './context/tar-extract.ts';
import { releaseDigestBuffer } from './context/checksum.ts';
import { parseDockerfile } from './dockerfile/parser.ts';
import { readDockerfile, removeIgnoredBuildFiles } from './dockerfile-file.ts';
import { BuildExecutor } from './executor.ts';
import type { FsSteps } from './step-context.ts';
import { StepImageWriter } from './image-writer.ts';
import { StepCache } from './cache.ts';
import type { BaseImages, BuildContainers, BuildMetrics } from './deps.ts';
import { buildFailureReason } from './failure-reason.ts';
import { fetchRemote, looksLikeArchive, peek } from './remote.ts';
import { StepFailed } from './run-step.ts';
import { cacheUsage, pruneCache, type GcPolicy } from './prune.ts';
import type { BuildCacheTable } from '../store/build-cache.ts';
import type { GcSettings } from './gc-config.ts';

export interface BuildServiceDeps {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  tmpDir: string;
  /** containerd's content directory, when the daemon runs its own (step layers then skip the diff service). */
  contentRoot?: string;
  containers: BuildContainers;
  base: BaseImages;
  cacheTable: BuildCacheTable;
  /** Tags an image (repo, tag) as `docker tag` does (events included). */
  tag(imageId: string, repo: string, tag: string): Promise<void>;
  /** Removes an image that is no longer needed (prune); false when something still uses it. */
  removeImage(imageId: string): Promise<boolean>;
  platform: { os: string; architecture: string };
  log: Logger;
  fs?: FsSteps;
  /** builder.gc of the current configuration (read at each build, so a reload applies). */
  gcSettings?: () => GcSettings;
  /** Build counts for --metrics-addr; none without it. */
  metrics?: BuildMetrics;
}

/**
 * Debug aid (bench/build-memory.ts reads it): the peaks of process.memoryUsage() over a build,
 * sampled every 25 ms, in MiB. Only runs at debug level.
 */
function sampleMemory(): () => Record<string, number> {
  const peak = { rss: 0, heapUsed: 0, heapTotal: 0, external: 0, arrayBuffers: 0 };
  const sample = () => {
    const m = process.memoryUsage();
    for (const k of Object.keys(peak) as Array<keyof typeof peak>) peak[k] = Math.max(peak[k], m[k]);
  };
  sample();
  const timer = setInterval(sample, 25);
  timer.unref();
  return () => {
    clearInterval(timer);
    sample();
    const mib = (n: number) => Math.round((n / 1048576) * 10) / 10;
    return { rssPeakMiB: mib(peak.rss), heapUsedPeakMiB: mib(peak.heapUsed), heapTotalPeakMiB: mib(peak.heapTotal), externalPeakMiB: mib(peak.external), arrayBuffersPeakMiB: mib(peak.arrayBuffers) };
  };
}

/** Tags as `repo` + `tag`, checked before anything runs (dockerd refuses a bad -t with a 400). */
export function parseTags(tags: readonly string[]): Array<{ repo: string; tag: string; text: string }> {
  return tags.map((t) => {
    let ref;
    try {
      ref = parseReference(t, { defaultTag: false });
    } catch {
      throw invalidParameter(`invalid reference format: ${t}`);
    }
    if (ref.digest) throw invalidParameter(`invalid reference format: ${t}`);
    const tag = ref.tag ?? 'latest';
    return { repo: familiarString({ ...ref, tag: undefined }), tag, text: familiarString({ ...ref, tag }) };
  });
}

export class BuildService {
  private readonly running = new Map<string, AbortController>();
  readonly cache: StepCache;
  private readonly writer: StepImageWriter;

  constructor(private readonly d: BuildServiceDeps) {
    this.cache = new StepCache(d.cacheTable);
    this.writer = new StepImageWriter({
      client: d.client, images: d.images, snapshotter: d.snapshotter, tmpDir: d.tmpDir, log: d.log, ...(d.contentRoot ? { contentRoot: d.contentRoot } : {}),
    });
  }

  async build(opts: BuildOptions, body: AsyncIterable<Uint8Array> | null, sink: BuildSink, signal: AbortSignal): Promise<void> {
    const tags = parseTags(opts.tags);
    this.d.metrics?.triggered();
    const abort = new AbortController();
    const onAbort = () => abort.abort(signal.reason ?? new Error('build cancelled'));
    if (signal.aborted) onAbort();
    signal.addEventListener('abort', onAbort, { once: true });
    const buildId = opts.buildId || randomBytes(16).toString('hex');
    this.running.set(buildId, abort);
    await mkdir(this.d.tmpDir, { recursive: true });
    const work = await mkdtemp(join(this.d.tmpDir, 'build-'));
    let entries = Infinity;
    let succeeded = false;
    // As dockerd, only failures of the Dockerfile's processing count (not a bad context).
    let processing = false;
    const memory = this.d.log.enabled('debug') ? sampleMemory() : undefined;
    const bounding = boundHeapGrowth();
    try {
      const contextDir = join(work, 'context');
      await mkdir(contextDir);
      entries = await this.receiveContext(opts, body, contextDir, abort.signal);
      const { name: dockerfileName, text } = readDockerfile(contextDir, opts.dockerfile);
      removeIgnoredBuildFiles(contextDir, dockerfileName);
      processing = true;
      const df = parseDockerfile(text);
      const exec = new BuildExecutor({
        client: this.d.client, images: this.d.images, writer: this.writer, containers: this.d.containers, base: this.d.base,
        cache: this.cache, platform: this.d.platform, log: this.d.log, ...(this.d.fs ? { fs: this.d.fs } : {}),
      }, opts, df, contextDir, sink, abort.signal);
      const result = await exec.run();
      sink({ stream: `Successfully built ${result.id.slice(7, 19)}\n` });
      for (const t of tags) {
        await this.d.tag(result.id, t.repo, t.tag);
        sink({ stream: `Successfully tagged ${t.text}\n` });
      }
      succeeded = true;
      this.collectGarbage();
    } catch (err) {
      const cancelled = abort.signal.aborted && !(err instanceof StepFailed);
      if (processing || cancelled) this.d.metrics?.failed(buildFailureReason(err, cancelled));
      if (cancelled) throw invalidParameter(`build cancelled: ${(abort.signal.reason as Error)?.message ?? 'cancelled'}`);
      throw err;
    } finally {
      signal.removeEventListener('abort', onAbort);
      this.running.delete(buildId);
      bounding.stop();
      if (this.running.size === 0) {
        releaseDigestBuffer();
        // A build is mostly waiting (on the disk, containerd, the step's process), so its event-loop
        // time is often less than what makes the trimmer act by itself; what it grew (the context's
        // per-file garbage, malloc's freed buffers) stayed resident (measured: +8 MiB 5 s after
        // a build of a 100 MiB context, none with this request).
        requestHeapTrim();
      }
      if (memory) this.d.log.debug('build memory', { entries, ...memory() });
      await this.removeWork(work, entries, succeeded);
    }
  }

  /**
   * Removes the build's temporary directory. A small context goes synchronously (an async
   * recursive rm costs a thread-pool hop per entry: ~8 ms for two dozen files, on every build);
   * a large one after a successful build goes in the background, so the client does not wait
   * for it (a failed build waits, so nothing is left when the error arrives). A large one goes by
   * `rm -rf` in a helper process: fs.promises.rm walks a tree with all its entries' operations
   * outstanding at once, and for 10 000 files that grew the daemon's heap by ~20 MiB, kept after.
   */
  private async removeWork(work: string, entries: number, succeeded: boolean): Promise<void> {
    const warn = (err: unknown) => this.d.log.warn(`removing build context ${work}: ${(err as Error).message}`);
    if (entries <= 500) {
      try {
        rmSync(work, { recursive: true, force: true });
      } catch (err) {
        warn(err);
      }
      return;
    }
    const done = runCommand('rm', ['-rf', '--', work], { timeoutMs: 600_000 }).then(() => undefined, warn);
    collectInBackground();
    if (!succeeded) await done;
  }

  /**
   * Receives the context into `dir`; returns the number of entries written. The tar is read up to
   * its end-of-archive marker only: what follows is left for the server to discard (never written).
   */
  private async receiveContext(opts: BuildOptions, body: AsyncIterable<Uint8Array> | null, dir: string, signal: AbortSignal): Promise<number> {
    if (opts.remote) return this.receiveFrom(await fetchRemote(opts.remote, signal), opts, dir, signal);
    if (!body) throw invalidParameter('a build context is required (a tar in the request body or remote=)');
    const reader = drainable(body);
    try {
      return await this.receiveFrom(reader.chunks, opts, dir, signal);
    } finally {
      reader.drainRest();
    }
  }

  private async receiveFrom(source: AsyncIterable<Uint8Array>, opts: BuildOptions, dir: string, signal: AbortSignal): Promise<number> {
    const { head, all } = await peek(source, 512);
    if (!head.length) throw invalidParameter('the build context is empty (send a tar of the context or a Dockerfile)');
    if (looksLikeArchive(head)) {
      return (await extractContext(all, dir, { dockerfile: opts.dockerfile, signal })).entries;
    }
    // A plain Dockerfile (at the URL, or as the body as dockerd accepts it): it is the whole context.
    const chunks: Buffer[] = [];
    let size = 0;
    for await (const c of all) {
      size += c.length;
      if (size > 16 * 1024 * 1024) throw invalidParameter('the build context is neither a tar archive nor a Dockerfile (over 16 MiB of text)');
      chunks.push(Buffer.from(c));
    }
    const path = join(dir, posix.normalize(`/${opts.dockerfile}`));
    await mkdir(posix.dirname(path), { recursive: true });
    await writeFile(path, Buffer.concat(chunks));
    return 1;
  }

  /** POST /build/cancel: true when a build with that ID was running. */
  cancel(id: string): boolean {
    const c = this.running.get(id);
    if (!c) return false;
    c.abort(new Error('cancelled by the client'));
    return true;
  }

  async prune(opts: BuildPruneOptions): Promise<BuildPruneResult> {
    return pruneCache(this.pruneDeps(), opts);
  }

  /** builder.gc after a build: in the background, one pass at a time. */
  private gcRunning = false;
  private collectGarbage(): void {
    const settings = this.d.gcSettings?.();
    if (!settings?.enabled || this.gcRunning) return;
    this.gcRunning = true;
    void this.gc(settings.policies)
      .then((r) => r.CachesDeleted?.length && this.d.log.info('build cache garbage collected', { entries: r.CachesDeleted.length, reclaimed: r.SpaceReclaimed }))
      .catch((err) => this.d.log.warn(`build cache garbage collection failed: ${(err as Error).message}`))
      .finally(() => (this.gcRunning = false));
  }

  /** builder.gc: drops the least recently used cache beyond the policy's keep-storage. */
  async gc(policies: GcPolicy[]): Promise<BuildPruneResult> {
    let deleted: string[] = [];
    let reclaimed = 0;
    for (const p of policies) {
      const r = await pruneCache(this.pruneDeps(), { all: p.all, keepStorage: p.keepStorage, filters: p.filters });
      deleted = deleted.concat(r.CachesDeleted ?? []);
      reclaimed += r.SpaceReclaimed;
    }
    return { CachesDeleted: deleted.length ? deleted : null, SpaceReclaimed: reclaimed };
  }

  async diskUsage(): Promise<BuildCacheEntry[]> {
    return cacheUsage(this.pruneDeps());
  }

  private pruneDeps() {
    return {
      cache: this.cache,
      image: async (id: string) => {
        try {
          const img = await this.d.images.resolve(id);
          return img.id === id ? { named: img.names.length > 0 } : undefined;
        } catch (err) {
          if (isNotFound(err)) return undefined;
          throw err;
        }
      },
      removeImage: this.d.removeImage,
      building: () => this.running.size > 0,
    };
  }
}

/**
 * The request body as chunks for the context reader, which stops at the tar's end-of-archive
 * marker; `drainRest` then reads what is left and drops it (as dockerd drains it), never writing
 * it anywhere, so the answer can go back on the connection.
 */
function drainable(source: AsyncIterable<Uint8Array>): { chunks: AsyncIterable<Uint8Array>; drainRest(): void } {
  const it = source[Symbol.asyncIterator]();
  let ended = false;
  const chunks = (async function* () {
    for (;;) {
      const r = await it.next();
      if (r.done) {
        ended = true;
        return;
      }
      yield r.value;
    }
  })();
  return {
    chunks,
    drainRest() {
      if (ended) return;
      ended = true;
      void (async () => {
        try {
          while (!(await it.next()).done);
        } catch {
          // the client went away or the body failed: nothing is left to drop
        }
      })();
    },
  };
}
