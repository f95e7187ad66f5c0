// Runs a parsed Dockerfile the way the classic builder does: every stage up to the target, one step
// per instruction ("Step n/m : …"), each step's result an image whose parent is the previous
// step's (config-only steps get an empty-layer history entry, RUN/COPY/ADD/WORKDIR a new layer),
// each looked up in the layer cache first (step-commit.ts); each stage's image is announced (aux ID)
// as it ends. Returns the target stage's final image.
import { invalidParameter, notFound } from '../errors.ts';
import type { BuildOptions, BuildSink } from '../types/build.ts';
import { planStages } from './dockerfile/stages.ts';
import { expandInstruction } from './dockerfile/shell-words.ts';
import { parseTrigger } from './dockerfile/parser.ts';
import type { BuildArgs } from './dockerfile/build-args.ts';
import type { Dockerfile, Instruction, Stage } from './dockerfile/types.ts';
import { applyConfigStep, DEFAULT_SHELL, nopCreatedBy } from './config-steps.ts';
import { scratchImage, stepImageOf, type StepImage } from './image-writer.ts';
import { runStep } from './run-step.ts';
import { workdirStep } from './fs-steps.ts';
import { short, type ExecutorDeps, type StageState, type StepContext } from './step-context.ts';
import { StepCommitter } from './step-commit.ts';
import { authForImage } from './registry-auth.ts';

export class BuildExecutor implements StepContext {
  private readonly results = new Map<number, StepImage>();
  private step = 0;
  private total = 0;
  /** Each step's cache lookup or execution, and its image. */
  private readonly steps: StepCommitter;

  constructor(
    readonly d: ExecutorDeps,
    readonly opts: BuildOptions,
    readonly df: Dockerfile,
    readonly contextDir: string,
    readonly sink: BuildSink,
    readonly signal: AbortSignal,
  ) {
    this.steps = new StepCommitter(d, opts, signal, (text) => this.out(text), (id) => this.imageLine(id));
  }

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
        return this.steps.commitStep(state, { createdBy: nopCreatedBy(shell, `ARG ${text}`), kind: 'internal' }, state.runtime);
      }
      case 'RUN':
        return this.steps.commitStep(state, runStep(this, state, inst), state.runtime);
      case 'WORKDIR':
        return this.steps.commitStep(state, workdirStep(this, state, inst.path), state.runtime);
      case 'COPY': case 'ADD': {
        if (!this.d.fs) throw invalidParameter(`${inst.kind} is not available in this build yet`);
        return this.steps.commitStep(state, await this.d.fs.copyStep(this, state, inst), state.runtime);
      }
      default: {
        const runtime = structuredClone(state.runtime);
        const hadCmd = state.cmdSet;
        const comment = applyConfigStep(runtime, inst);
        if (comment === null) throw invalidParameter(`unknown instruction: ${inst.kind}`);
        if (inst.kind === 'CMD') state.cmdSet = true;
        if (inst.kind === 'ENTRYPOINT' && !hadCmd) runtime.Cmd = null;
        return this.steps.commitStep(state, { createdBy: nopCreatedBy(shell, comment), kind: 'internal' }, runtime);
      }
    }
  }
}
