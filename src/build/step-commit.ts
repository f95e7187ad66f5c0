// A step's outcome in the classic builder: the layer cache asked first (with cachefrom, only the
// named images and their ancestors count, and a layer may be restored from them), else the step
// executed and its image written under a lease and remembered in the cache; the stage then moves on
// to the step's image. Also the local images by ID and their parents, listed once per build.
import type { LocalImage } from '../images/image-store.ts';
import { parentId } from '../images/image-views.ts';
import type { BuildOptions } from '../types/build.ts';
import { cacheKey } from './cache.ts';
import { isAncestorOfSource, matchCacheFrom } from './cache-from.ts';
import { stepImageOf, type RuntimeConfig, type StepImage } from './image-writer.ts';
import type { ExecutorDeps, StageState, StepPlan } from './step-context.ts';

export class StepCommitter {
  constructor(
    private readonly d: ExecutorDeps,
    private readonly opts: Pick<BuildOptions, 'noCache' | 'cacheFrom'>,
    private readonly signal: AbortSignal,
    /** A line of the build's output stream. */
    private readonly out: (text: string) => void,
    /** The ` ---> <id>` line of a step's image (none inside ONBUILD triggers). */
    private readonly imageLine: (id: string) => void,
  ) {}

  /** Cache lookup, else execution and image write; the stage moves on to the step's image. */
  async commitStep(state: StageState, plan: StepPlan, runtime: RuntimeConfig): Promise<void> {
    try {
      await this.commitOrReuse(state, plan, runtime);
    } finally {
      await plan.cleanup?.();
    }
  }

  private async commitOrReuse(state: StageState, plan: StepPlan, runtime: RuntimeConfig): Promise<void> {
    const parent = state.image;
    const key = cacheKey(parent.id, plan.createdBy, plan.checksum);
    if (!this.opts.noCache) {
      const sources = this.opts.cacheFrom.length ? await this.cacheFromImages() : undefined;
      const hit = await this.d.cache.lookup(key, async (id) => !!(await this.findImage(id)));
      // With cachefrom, the named images are the only cache sources (cache-from.ts).
      if (hit && (!sources || (await isAncestorOfSource(hit, sources, (id) => this.parentOf(id))))) {
        const img = (await this.findImage(hit))!;
        state.image = img;
        state.runtime = structuredClone(img.config.config ?? {});
        this.out(' ---> Using cache\n');
        this.imageLine(hit);
        return;
      }
      const from = sources && matchCacheFrom(parent, plan.createdBy, sources);
      if (from) {
        let next: StepImage;
        if (from.kind === 'image') next = from.source;
        else {
          const layer = from.layer ? { desc: from.layer.desc, diffId: from.layer.diffId, unpacked: false } : undefined;
          next = await this.d.client.withLease((lease) => this.d.writer.write(parent, runtime, plan.createdBy, layer, lease, { entry: from.entry, author: from.source.config.author }));
          this.cacheFrom = Promise.resolve([from.source]); // dockerd sticks to the source it restored from
          this.parents.set(next.id, parent.id);
          this.d.cache.store(key, { imageId: next.id, parentId: parent.id, createdBy: plan.createdBy, kind: plan.kind, size: from.layer ? Number(from.layer.desc.size) : 0 });
        }
        this.known?.set(next.id, next);
        state.image = next;
        state.runtime = structuredClone(next.config.config ?? {});
        this.out(' ---> Using cache\n');
        this.imageLine(next.id);
        return;
      }
    }
    const next = await this.d.client.withLease(async (lease) => {
      const layer = plan.execute ? await plan.execute(lease) : undefined;
      if (this.signal.aborted) throw this.signal.reason;
      return this.d.writer.write(parent, runtime, plan.createdBy, layer, lease);
    });
    this.known?.set(next.id, next);
    this.parents.set(next.id, parent.id);
    const size = next.layers.length > parent.layers.length ? Number(next.layers.at(-1)!.size) : 0;
    this.d.cache.store(key, { imageId: next.id, parentId: parent.id, createdBy: plan.createdBy, kind: plan.kind, size });
    state.image = next;
    state.runtime = structuredClone(next.config.config ?? {});
    this.imageLine(next.id);
  }

  private cacheFrom?: Promise<StepImage[]>;
  /** The cachefrom images present locally (dockerd skips missing ones silently; so do we, in the log). */
  private cacheFromImages(): Promise<StepImage[]> {
    this.cacheFrom ??= (async () => {
      const out: StepImage[] = [];
      for (const ref of this.opts.cacheFrom) {
        const img = await this.d.base.find(ref);
        if (img) out.push(stepImageOf(img));
        else this.d.log.debug(`cachefrom image ${ref} is not present locally: not used`);
      }
      return out;
    })();
    return this.cacheFrom;
  }
  /** Parents of the images this build wrote (their records carry it too). */
  private readonly parents = new Map<string, string>();

  /** An image's Parent ('' when none or unknown). */
  private async parentOf(id: string): Promise<string> {
    const own = this.parents.get(id);
    if (own !== undefined) return own;
    this.known ??= new Map((await this.d.images.list()).map((i) => [i.id, i]));
    const img = this.known.get(id);
    return img && 'manifest' in img ? parentId(img) : '';
  }

  /** The local images by ID, listed once per build (a cached step costs no containerd round trip). */
  private known?: Map<string, StepImage | LocalImage>;

  async findImage(id: string): Promise<StepImage | undefined> {
    this.known ??= new Map((await this.d.images.list()).map((i) => [i.id, i]));
    const hit = this.known.get(id);
    if (hit) return 'manifest' in hit ? stepImageOf(hit) : hit;
    try {
      // Made since the listing (a concurrent build): ask containerd.
      const img = await this.d.images.resolve(id);
      return img.id === id ? stepImageOf(img) : undefined;
    } catch (err) {
      if ((err as { code?: string }).code === 'NOT_FOUND') return undefined;
      throw err;
    }
  }
}
