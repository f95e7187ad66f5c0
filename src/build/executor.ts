// Runs a parsed Dockerfile the way the classic builder does: every stage up to the target, one step
// per instruction ("Step n/m : …"), each step's result an image whose parent is the previous
// step's (config-only steps get an empty-layer history entry, RUN/COPY/ADD/WORKDIR a new layer),
// each looked up in the layer cache first; each stage's image is announced (aux ID) as it ends.
// Returns the target stage's final image.
import { invalidParameter, notFound } from '../errors.ts';
import type { LocalImage } from '../images/image-store.ts';
import type { BuildOptions, BuildSink } from '../types/build.ts';
import { planStages } from './dockerfile/stages.ts';
import { expandInstruction } from './dockerfile/shell-words.ts';
import { parseTrigger } from './dockerfile/parser.ts';
import type { BuildArgs } from './dockerfile/build-args.ts';
import type { Dockerfile, Instruction, Stage } from './dockerfile/types.ts';
import { applyConfigStep, DEFAULT_SHELL, nopCreatedBy } from './config-steps.ts';
import { cacheKey } from './cache.ts';
import { scratchImage, stepImageOf, type RuntimeConfig, type StepImage } from './image-writer.ts';
import { runStep } from './run-step.ts';
import { workdirStep } from './fs-steps.ts';
import { short, type ExecutorDeps, type StageState, type StepContext, type StepPlan } from './step-context.ts';

import { authForImage } from './registry-auth.ts';
import { isAncestorOfSource, matchCacheFrom } from './cache-from.ts';
import { parentId } from '../images/image-views.ts';

export class BuildExecutor implements StepContext {
  private readonly results = new Map<number, StepImage>();
  private step = 0;
  private total = 0;

  constructor(
    readonly d: ExecutorDeps,
    readonly opts: BuildOptions,
    readonly df: Dockerfile,
    readonly contextDir: string,
    readonly sink: BuildSink,
    readonly signal: AbortSignal,
  ) {}

  /** The image an earlier stage ended with. */
  stageResult(index: number): StepImage {
    const img = this.results.get(index);
    if (!img) throw invalidParameter(`stage ${index} has not been built`);
    return img;
  }

  out(text: string): void {
    this.sink({ stream: text });
  }

  async run(): Promise<StepImage> {
    const plan = planStages(this.df, { target: this.opts.target, buildArgs: this.opts.buildArgs });
    for (const w of this.df.warnings) this.out(`${w}\n`);
    const labels = Object.entries(this.opts.labels);
    const target = plan.target;
    if (labels.length) {
      // dockerd appends the build's labels to the target stage as one more LABEL step.
      const original = `LABEL ${labels.map(([k, v]) => `${JSON.stringify(k)}=${JSON.stringify(v)}`).join(' ')}`;
      target.instructions = [...target.instructions, { kind: 'LABEL', line: 0, endLine: 0, original, flags: {}, pairs: labels }];
    }
    this.total = plan.order.reduce((n, i) => n + 1 + this.df.stages[i]!.instructions.length, 0);
    let last: StepImage | undefined;
    for (const index of plan.order) {
      const stage = this.df.stages[index]!;
      last = await this.runStage(stage, plan.bases.get(index)!, plan.platforms.get(index), plan.args.forStage());
      this.results.set(index, last);
      // dockerd announces each stage's image as it ends (the last one is the build's result).
      if (last.id) this.sink({ aux: { ID: last.id } });
    }
    const unused = plan.args.unconsumed();
    if (unused.length) this.out(`[Warning] One or more build-args [${unused.join(' ')}] were not consumed\n`);
    if (!last || !last.id) throw invalidParameter('No image was generated. Is your Dockerfile empty?');
    return last;
  }

  /** Running an ONBUILD trigger of the stage's base (its steps print no image line). */
  private inTriggers = false;

  private imageLine(id: string): void {
    if (!this.inTriggers) this.out(` ---> ${short(id)}\n`);
  }

  private stepLine(original: string): void {
    this.step++;
    // Two writes, as dockerd's (Fprintf, then Fprintln): two messages in the stream.
    this.out(`Step ${this.step}/${this.total} : ${original}`);
    this.out('\n');
  }

  private async runStage(stage: Stage, base: ReturnType<typeof planStages>['bases'] extends Map<number, infer S> ? S : never, platform: string | undefined, args: BuildArgs): Promise<StepImage> {
    this.stepLine(stage.from.original);
    let image: StepImage;
    if (base.kind === 'scratch') image = scratchImage(this.d.platform);
    else if (base.kind === 'stage') image = this.results.get(base.index)!;
    else image = await this.baseImage(base.ref, platform);
    const state: StageState = { image, runtime: structuredClone(image.config.config ?? {}), args, cmdSet: false, stageIndex: stage.index };
    const triggers = state.runtime.OnBuild ?? [];
    if (triggers.length) {
      // As dockerd: the triggers' own lines (containers, cache hits) but no image line per trigger;
      // the FROM step's one image line comes after them.
      this.out(`# Executing ${triggers.length} build trigger`);
      if (triggers.length > 1) this.out('s');
      this.out('\n');
      state.runtime.OnBuild = null; // triggers run once, in the child; they are not inherited
      this.inTriggers = true;
      try {
        for (const t of triggers) await this.dispatch(state, parseTrigger(t), true);
      } finally {
        this.inTriggers = false;
      }
    }
    if (state.image.id) this.out(` ---> ${short(state.image.id)}\n`);
    for (const inst of stage.instructions) {
      if (this.signal.aborted) throw this.signal.reason;
      this.stepLine(inst.original);
      await this.dispatch(state, inst, false);
    }
    return state.image;
  }

  /** The base image of a FROM: local, or pulled when missing (or always with `pull`). */
  async baseImage(ref: string, platform: string | undefined): Promise<StepImage> {
    let img = this.opts.pull ? undefined : await this.d.base.find(ref);
    if (!img) {
      await this.d.base.pull(ref, platform ?? this.opts.platform, authForImage(this.opts.registryAuth, ref), this.sink, this.signal);
      img = await this.d.base.find(ref);
      if (!img) throw notFound(`No such image: ${ref}`);
    }
    return stepImageOf(img);
  }

  private async dispatch(state: StageState, raw: Instruction, trigger: boolean): Promise<void> {
    const inst = expandInstruction(raw, state.args.expansionEnv(state.runtime.Env ?? []), this.df.escapeChar);
    const shell = state.runtime.Shell?.length ? state.runtime.Shell : DEFAULT_SHELL;
    if (inst.kind === 'ONBUILD' && /^\s*(ONBUILD|FROM|MAINTAINER)\b/i.test(inst.trigger)) {
      throw invalidParameter(`${inst.trigger.trim().split(/\s+/)[0]!.toUpperCase()} isn't allowed as an ONBUILD trigger`);
    }
    if (trigger && raw.kind === 'ONBUILD') throw invalidParameter('Chaining ONBUILD via `ONBUILD ONBUILD` isn\'t allowed');
    switch (inst.kind) {
      case 'FROM':
        throw invalidParameter('FROM is only allowed at the start of a stage');
      case 'ARG': {
        for (const a of inst.args) state.args.declare(a.name, a.default);
        const text = inst.args.map((a) => (a.default === undefined ? a.name : `${a.name}=${a.default}`)).join(' ');
        return this.commitStep(state, { createdBy: nopCreatedBy(shell, `ARG ${text}`), kind: 'internal' }, state.runtime);
      }
      case 'RUN':
        return this.commitStep(state, runStep(this, state, inst), state.runtime);
      case 'WORKDIR':
        return this.commitStep(state, workdirStep(this, state, inst.path), state.runtime);
      case 'COPY': case 'ADD': {
        if (!this.d.fs) throw invalidParameter(`${inst.kind} is not available in this build yet`);
        return this.commitStep(state, await this.d.fs.copyStep(this, state, inst), state.runtime);
      }
      default: {
        const runtime = structuredClone(state.runtime);
        const hadCmd = state.cmdSet;
        const comment = applyConfigStep(runtime, inst);
        if (comment === null) throw invalidParameter(`unknown instruction: ${inst.kind}`);
        if (inst.kind === 'CMD') state.cmdSet = true;
        if (inst.kind === 'ENTRYPOINT' && !hadCmd) runtime.Cmd = null;
        return this.commitStep(state, { createdBy: nopCreatedBy(shell, comment), kind: 'internal' }, runtime);
      }
    }
  }

  /** Cache lookup, else execution and image write; the stage moves on to the step's image. */
  private async commitStep(state: StageState, plan: StepPlan, runtime: RuntimeConfig): Promise<void> {
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
