// The unpacking half of a pull: layers in chain order, each as soon as its blob is in and its
// parent committed, into a snapshot named by its chainID — a layer a stage worker unpacked while it
// downloaded renamed onto the prepared snapshot's upper directory, any other through containerd's
// diff service; the diffID checked against the image configuration.
import { randomBytes } from 'node:crypto';
import { rename } from 'node:fs/promises';
import { internal } from '../../errors.ts';
import type { SupervisorClient } from '../../supervisor/client.ts';
import { grpcCode, GrpcStatus } from '../../supervisor/errors.ts';
import type { Mount } from '../../supervisor/types.ts';
import type { Logger } from '../../util/log.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import { upperDirOf } from '../overlay-diff.ts';
import type { Descriptor } from './media.ts';
import { itemProgress, itemStatus } from './progress.ts';
import type { StagedLayer } from './stage/staged-unpack.ts';

export interface LayerJob {
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

/** Whether a containerd lookup finds its object (NOT_FOUND: false; any other failure throws). */
export async function isPresent(fn: () => Promise<unknown>): Promise<boolean> {
  try {
    await fn();
    return true;
  } catch (err) {
    if (grpcCode(err) === GrpcStatus.NOT_FOUND) return false;
    throw err;
  }
}

/** The pull the unpack belongs to. */
export interface UnpackTarget {
  lease: string;
  signal: AbortSignal;
  sink: ProgressSink;
  /** Keeps something already there alive for the rest of the pull (under its lease). */
  hold: (id: string, type: string) => Promise<void>;
  /** Notes a milestone of a layer for the pull's debug timeline. */
  mark: (digest: string, what: string) => void;
  /** Cancels the rest of the pull (the downloads still running) when an unpack fails. */
  cancel: (reason: unknown) => void;
}

export class LayerUnpacker {
  constructor(
    private readonly client: SupervisorClient,
    private readonly snapshotter: string,
    private readonly log: Logger,
    private readonly pull: UnpackTarget,
    /** Layers unpacked while they downloaded (layer-download.ts), by blob digest; taken when placed. */
    private readonly staged: Map<string, StagedLayer>,
  ) {}

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
      this.log.debug(`staged layer ${job.desc.digest} not placed: ${(err as Error).message}`);
      return false;
    }
    this.staged.delete(job.desc.digest);
    return true;
  }

  /** Unpacks in chain order, each layer as soon as its blob is in (parents are committed first). */
  async unpack(jobs: LayerJob[]): Promise<void> {
    const { client, snapshotter } = this;
    const { lease, signal, sink, mark } = this.pull;
    try {
      for (let i = 0; i < jobs.length; i++) {
        const job = jobs[i]!;
        await job.blob;
        mark(job.desc.digest, 'turn');
        if (job.alreadyExists) continue;
        if (job.snapshotPresent || (await isPresent(() => client.snapshots.stat(job.chainId, { snapshotter })))) {
          // Unpacked meanwhile (a concurrent pull of an image sharing the layer).
          await this.pull.hold(job.chainId, `snapshots/${snapshotter}`);
          sink(itemStatus(job.id, 'Pull complete'));
          continue;
        }
        signal.throwIfAborted();
        sink(itemProgress(job.id, 'Extracting', 0, job.desc.size));
        const key = `extract-${randomBytes(6).toString('hex')}-${job.chainId}`;
        const parent = i > 0 ? jobs[i - 1]!.chainId : '';
        const mounts = await client.snapshots.prepare({ key, parent, snapshotter }, { lease });
        mark(job.desc.digest, 'prepared');
        try {
          const applied = (await this.placeStaged(job, mounts))
            ? { digest: job.diffId }
            : await client.diff.apply({ media_type: job.desc.mediaType, digest: job.desc.digest, size: String(job.desc.size) }, mounts, {
                lease,
                signal,
              });
          if (applied.digest !== job.diffId)
            throw internal(
              `failed to register layer: layer ${job.desc.digest} unpacked to ${applied.digest}, the image configuration says ${job.diffId}`,
            );
          mark(job.desc.digest, 'applied');
          await client.snapshots.commit({ name: job.chainId, key, snapshotter }, { lease });
          mark(job.desc.digest, 'committed');
        } catch (err) {
          // The unpack failed (reported below) or raced a concurrent one; the partial snapshot is under the pull's lease anyway.
          await client.snapshots
            .remove(key, { snapshotter })
            .catch((e: Error) => this.log.debug(`extract snapshot ${key} not removed: ${e.message}`));
          if (grpcCode(err) !== GrpcStatus.ALREADY_EXISTS) throw err;
        }
        sink(itemProgress(job.id, 'Extracting', job.desc.size, job.desc.size));
        sink(itemStatus(job.id, 'Pull complete'));
      }
    } catch (err) {
      this.pull.cancel(err);
      throw err;
    }
  }
}
