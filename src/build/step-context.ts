// What a step of the classic builder sees of the build running it (StepContext, which the executor
// implements), the state of the stage it belongs to and the plan it returns: declared apart from
// the executor so the step modules (run-step.ts, fs-steps.ts, copy-steps.ts) need not import it.
import type { Logger } from '../util/log.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { ImageStore } from '../images/image-store.ts';
import type { BuildOptions, BuildSink } from '../types/build.ts';
import type { BuildArgs } from './dockerfile/build-args.ts';
import type { AddInstruction, CopyInstruction, Dockerfile } from './dockerfile/types.ts';
import type { CacheKind, StepCache } from './cache.ts';
import type { NewLayer, RuntimeConfig, StepImage, StepImageWriter } from './image-writer.ts';
import type { BaseImages, BuildContainers } from './deps.ts';

export interface ExecutorDeps {
  client: SupervisorClient;
  images: ImageStore;
  writer: StepImageWriter;
  containers: BuildContainers;
  base: BaseImages;
  cache: StepCache;
  platform: { os: string; architecture: string };
  log: Logger;
  /** COPY/ADD (build/context); absent: those instructions are refused. */
  fs?: FsSteps;
}

export interface StageState {
  image: StepImage;
  runtime: RuntimeConfig;
  args: BuildArgs;
  /** A CMD was set in this stage (an ENTRYPOINT then keeps it). */
  cmdSet: boolean;
  stageIndex: number;
}

/** What a step computes before the cache is asked: its history text and how to make its image. */
export interface StepPlan {
  createdBy: string;
  checksum?: string;
  kind: CacheKind;
  /** Makes the step's image (cache miss); absent: a config-only step. */
  execute?: (lease: string) => Promise<NewLayer | undefined>;
  /** Runs after the step, hit or miss (mounts and downloads of COPY/ADD). */
  cleanup?: () => Promise<void>;
}

export const short = (id: string) => id.replace(/^sha256:/, '').slice(0, 12);

/** COPY and ADD, provided by the context side (sources, wildcards, --chown/--chmod, URLs, tars). */
export interface FsSteps {
  copyStep(b: StepContext, state: StageState, inst: CopyInstruction | AddInstruction): Promise<StepPlan>;
}

/** The running build as its steps use it. */
export interface StepContext {
  readonly d: ExecutorDeps;
  readonly opts: BuildOptions;
  readonly df: Dockerfile;
  readonly contextDir: string;
  readonly sink: BuildSink;
  readonly signal: AbortSignal;
  /** The final image of an earlier stage (`COPY --from=<index>`). */
  stageResult(index: number): StepImage;
  /** A line of the build's output stream. */
  out(text: string): void;
  /** The base image of a FROM: local, or pulled when missing. */
  baseImage(ref: string, platform: string | undefined): Promise<StepImage>;
}

