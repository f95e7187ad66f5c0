// The download of one layer blob of a pull: a slot of max-concurrent-downloads, max-download-attempts
// with dockerd's backoff, and the bytes written into the content store — by a stage worker that
// sends the GET itself (worker-fetch.ts), by one fed from the main thread's response, or through
// Content.Write; a layer the stage worker unpacked meanwhile is kept for the unpack (layer-unpack.ts).
import { dirname } from 'node:path';
import { EngineError, internal } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import { grpcCode, GrpcStatus } from '../../supervisor/errors.ts';
import type { Logger } from '../../util/log.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import { retryable } from './errors.ts';
import type { Descriptor } from './media.ts';
import { itemStatus, ProgressThrottle } from './progress.ts';
import type { RegistrySession } from './registry-client.ts';
import type { Semaphore } from './shared.ts';
import { writeBlob } from './blob-writer.ts';
import { writeBlobThreaded } from './stage/stage-pool.ts';
import { stageable, type StagedLayer } from './stage/staged-unpack.ts';

/** What the daemon's configuration says about downloading layers. */
export interface LayerDownloadSettings {
  client: SupervisorClient;
  snapshotter: string;
  limits: () => { maxConcurrentDownloads: number; maxDownloadAttempts: number };
  log: Logger;
  /** containerd's content directory when the daemon manages containerd (see blob-writer.ts). */
  contentRoot?: string;
  /** Unpack layers while they download (staged-unpack.ts; the default); false: containerd's diff service after each download. */
  stageLayers?: boolean;
  /** The stage workers send the layers' GETs themselves (worker-fetch.ts; the default); false: the main thread receives. */
  workerFetch?: boolean;
  /** Seconds to wait before retry n (1-based); dockerd waits 5 s × n. */
  retryDelaySeconds?: (attempt: number) => number;
}

/** The pull the downloads belong to. */
export interface DownloadTarget {
  /** The registry and the repository path inside it. */
  domain: string;
  path: string;
  /** The pull's lease and the prefix of its ingest references. */
  lease: string;
  ingestPrefix: string;
  signal: AbortSignal;
  sink: ProgressSink;
  /** Notes a milestone of a layer for the pull's debug timeline. */
  mark: (digest: string, what: string) => void;
}

export function sleep(ms: number, signal: AbortSignal): Promise<void> {
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

export class LayerDownloads {
  /** Whether any layer was downloaded (the final status says "Downloaded newer image"). */
  downloadedAny = false;

  constructor(
    private readonly settings: LayerDownloadSettings,
    private readonly pull: DownloadTarget,
    /** Layers unpacked while they downloaded, by blob digest, until renamed into their snapshot. */
    private readonly staged: Map<string, StagedLayer>,
  ) {}

  async download(session: RegistrySession, sem: Semaphore, desc: Descriptor, diffId: string, id: string): Promise<void> {
    const { signal, sink } = this.pull;
    // The slot is given back once the bytes are in: their hashing and unpacking need no connection.
    let release: (() => void) | null = await sem.acquire(() => sink(itemStatus(id, 'Waiting')), signal);
    const received = () => {
      release?.();
      release = null;
    };
    try {
      const attempts = Math.max(1, this.settings.limits().maxDownloadAttempts);
      for (let attempt = 1; ; attempt++) {
        try {
          release ??= await sem.acquire(() => sink(itemStatus(id, 'Waiting')), signal);
          await this.downloadOnce(session, desc, diffId, id, received);
          this.downloadedAny = true;
          sink(itemStatus(id, 'Download complete'));
          return;
        } catch (err) {
          if (signal.aborted || attempt >= attempts || !retryable(err)) throw err;
          this.settings.log.warn(`download of ${desc.digest} failed (attempt ${attempt} of ${attempts}): ${(err as Error).message}`);
          const delay = this.settings.retryDelaySeconds?.(attempt) ?? 5 * attempt;
          for (let s = delay; s > 0; s--) {
            sink(itemStatus(id, `Retrying in ${s} second${s === 1 ? '' : 's'}`));
            await sleep(1000, signal);
          }
        }
      }
    } finally {
      received();
    }
  }

  private async downloadOnce(session: RegistrySession, desc: Descriptor, diffId: string, id: string, gotAll: () => void): Promise<void> {
    const { signal, sink, lease } = this.pull;
    const { client, contentRoot } = this.settings;
    const labels: Record<string, string> = {
      'containerd.io/uncompressed': diffId,
      [`containerd.io/distribution.source.${this.pull.domain}`]: this.pull.path,
    };
    const ref = `${this.pull.ingestPrefix}-${desc.digest}`;
    const threaded = !!contentRoot && desc.digest.startsWith('sha256:');
    const stage = threaded && this.settings.stageLayers !== false && this.settings.snapshotter === 'overlayfs' && stageable(desc.mediaType);
    const progress = new ProgressThrottle(sink, id, 'Downloading');
    const mark = (what: string) => this.pull.mark(desc.digest, what);
    const allIn = () => {
      mark('received');
      gotAll();
      progress.update(desc.size, desc.size, true);
      sink(itemStatus(id, 'Verifying Checksum'));
    };
    const target = { client, lease, contentRoot: contentRoot! };
    const stageAt = stage ? { root: dirname(contentRoot!), mediaType: desc.mediaType } : null;
    mark('request');
    if (threaded && this.settings.workerFetch !== false) {
      // The worker sends the GET itself (worker-fetch.ts); anything but a 200 is repeated below.
      const req = await session.blobRequest(this.pull.path, desc.digest, signal);
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
      this.settings.log.debug(`blob ${desc.digest}: the registry answered ${r.status} to the stage worker; asking again`);
    }
    const res = await session.getBlob(this.pull.path, desc.digest, signal);
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
    await this.verified(desc, () => writeBlob({ client, lease }, ref, desc.digest, desc.size, body(), labels));
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
    this.pull.mark(desc.digest, r.staged ? 'staged' : 'stored');
    // dockerd's words for a layer with an entry leading out of it ("failed to register layer: …").
    if (r.refused) throw new EngineError('INTERNAL', `failed to register layer: ${r.reason}`);
    if (r.staged) this.staged.set(desc.digest, r.staged);
    else if (stage) this.settings.log.debug(`layer ${desc.digest} goes through the diff service: ${r.reason}`);
  }
}
