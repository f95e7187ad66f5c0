// COPY and ADD for the executor: sources from the context, or (`--from`) from an earlier stage's or
// an image's filesystem mounted read-only for the step; the plan (sources, checksum, history text)
// is made before the cache is asked, the copy runs into the step's snapshot on a miss.
import { mkdtemp, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { SupervisorClient } from '../supervisor/client.ts';
import { withMounted } from '../supervisor/mounts.ts';
import type { AddInstruction, CopyInstruction } from './dockerfile/types.ts';
import { resolveCopyFrom } from './dockerfile/stages.ts';
import { planCopyStep } from './context/copy-step.ts';
import { renderProgress } from '../images/distribution/progress.ts';
import { DEFAULT_SHELL } from './config-steps.ts';
import type { StageState, StepContext, StepPlan } from './step-context.ts';
import type { FsSteps } from './step-context.ts';
import { scratchImage, topChain, type StepImage } from './image-writer.ts';

/** ADD of a URL: dockerd's "Downloading" progress lines, at most ten a second (and the last one). */
function downloadProgress(b: StepContext): (url: string, received: number, total: number | undefined) => void {
  let last = 0;
  return (_url, received, total) => {
    const now = Date.now();
    if (now - last < 100 && received !== total) return;
    last = now;
    b.sink({ status: 'Downloading', progressDetail: { current: received, ...(total ? { total } : {}) }, progress: renderProgress(received, total ?? 0) });
  };
}

export class CopySteps implements FsSteps {
  constructor(private readonly d: { client: SupervisorClient; snapshotter: string; tmpDir: string }) {}

  async copyStep(b: StepContext, state: StageState, inst: CopyInstruction | AddInstruction): Promise<StepPlan> {
    const cleanups: Array<() => Promise<void>> = [];
    const cleanup = async () => {
      for (const fn of cleanups.splice(0).reverse()) await fn();
    };
    try {
      // Only ADD downloads (COPY refuses URLs before anything is fetched): no directory to make and
      // remove for every COPY.
      let downloads = this.d.tmpDir;
      if (inst.kind === 'ADD') {
        const dir = await mkdtemp(join(this.d.tmpDir, 'build-add-'));
        cleanups.push(() => rm(dir, { recursive: true, force: true }));
        downloads = dir;
      }
      let sourceRoot = b.contextDir;
      if (inst.kind === 'COPY' && inst.from !== undefined) {
        const src = resolveCopyFrom(b.df, state.stageIndex, inst.from);
        const image: StepImage = src.kind === 'stage' ? b.stageResult(src.index) : src.kind === 'image' ? await b.baseImage(src.ref, undefined) : scratchImage(b.d.platform);
        sourceRoot = await this.mountReadOnly(image, cleanups);
      }
      const plan = await planCopyStep({
        inst, sourceRoot, fromContext: sourceRoot === b.contextDir, workdir: state.runtime.WorkingDir || '/', tmpDir: downloads, signal: b.signal,
        onProgress: downloadProgress(b),
      });
      const shell = state.runtime.Shell?.length ? state.runtime.Shell : DEFAULT_SHELL;
      const parent = state.image;
      return {
        createdBy: [...shell, `#(nop) ${plan.comment}`].join(' '),
        checksum: plan.checksum,
        kind: 'source.local',
        execute: (lease) => b.d.writer.fsLayer(parent, lease, async (root, upper) => (await plan.run(root, upper !== null)).afterUnmount),
        cleanup,
      };
    } catch (err) {
      await cleanup();
      throw err;
    }
  }

  /** A read-only view of the image's filesystem, mounted until the step's cleanup. */
  private async mountReadOnly(image: StepImage, cleanups: Array<() => Promise<void>>): Promise<string> {
    const { client, snapshotter } = this.d;
    const chain = topChain(image);
    const emptyDir = await mkdtemp(join(this.d.tmpDir, 'build-from-'));
    cleanups.push(() => rm(emptyDir, { recursive: true, force: true }));
    if (!chain) return emptyDir; // scratch: nothing to copy from
    const lease = await client.leases.create({ expireMs: 3_600_000 });
    cleanups.push(() => client.leases.delete(lease.id));
    const key = `build-from-${randomBytes(8).toString('hex')}`;
    const mounts = await client.snapshots.view({ key, parent: chain, snapshotter }, { lease: lease.id });
    cleanups.push(() => client.snapshots.remove(key, { snapshotter, lease: lease.id }));
    // withMounted keeps the mount for the callback's life: the callback waits for the cleanup.
    let release!: () => void;
    const released = new Promise<void>((r) => (release = r));
    let mounted!: (root: string) => void;
    const ready = new Promise<string>((r) => (mounted = r));
    const done = withMounted(mounts, this.d.tmpDir, async (root) => {
      mounted(root);
      await released;
    });
    cleanups.push(async () => {
      release();
      await done.catch(() => undefined); // a failed mount already failed the step with its own error
    });
    return Promise.race([ready, done.then(() => { throw new Error('the --from filesystem could not be mounted'); })]);
  }
}
