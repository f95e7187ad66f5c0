// Stage resolution for multi-stage builds: `--target`, what each FROM names (scratch, an earlier
// stage, an image; expanded with the meta ARGs), what each `COPY --from` names (a stage by name or
// index, or an image), and the stages built: as dockerd's classic builder, every stage up to the
// target, needed or not (BuildKit skips the unused ones; a client of /build sees the classic
// builder's steps, a per-stage image ID each, and a failing unused stage failing the build).
import { invalidParameter } from '../../errors.ts';
import { applyAutomaticArgs, applyMetaArgs, BuildArgs, expandWithMeta, type BuildArgOptions } from './build-args.ts';
import type { Dockerfile, Stage } from './types.ts';

export type StageSource =
  | { kind: 'scratch' }
  | { kind: 'stage'; index: number }
  | { kind: 'image'; ref: string };

export interface StagePlan {
  /** The stage whose result is the build's image. */
  target: Stage;
  /** Indexes of the stages to build, ascending (each one's dependencies come before it). */
  order: number[];
  /** What each planned stage starts from. */
  bases: Map<number, StageSource>;
  /** The `--platform` of each planned stage's FROM, expanded (absent: the build's platform). */
  platforms: Map<number, string>;
  /** Build args after the meta ARGs: give `args.forStage()` to each stage. */
  args: BuildArgs;
}

/** The stage `--target` names (case-insensitive), or the last one. */
export function findTarget(df: Dockerfile, target?: string): Stage {
  if (df.stages.length === 0) throw invalidParameter('No image was generated. Is your Dockerfile empty?');
  if (!target) return df.stages[df.stages.length - 1]!;
  const t = target.toLowerCase();
  const stage = df.stages.find((s) => s.name === t);
  if (!stage) throw invalidParameter(`target stage ${JSON.stringify(target)} could not be found`);
  return stage;
}

/** Stage names must be unique (dockerd: "<name> stage name already used"). */
function checkNames(df: Dockerfile): void {
  const seen = new Set<string>();
  for (const s of df.stages) {
    if (s.name === undefined) continue;
    if (seen.has(s.name)) throw invalidParameter(`dockerfile parse error on line ${s.from.line}: ${s.name} stage name already used`);
    seen.add(s.name);
  }
}

/** What a FROM names, once expanded; only stages before `current` count, as in Docker. */
export function resolveFrom(df: Dockerfile, current: number, name: string, original: string): StageSource {
  if (name === '') throw invalidParameter(`base name (${original}) should not be blank`);
  const lower = name.toLowerCase();
  const stage = df.stages.slice(0, current).find((s) => s.name === lower);
  if (stage) return { kind: 'stage', index: stage.index };
  if (lower === 'scratch') return { kind: 'scratch' };
  return { kind: 'image', ref: name };
}

/**
 * What `COPY --from=<value>` names in stage `current`: an earlier stage by name, a stage by index
 * (not this one nor a later one), or else an image reference.
 */
export function resolveCopyFrom(df: Dockerfile, current: number, value: string): StageSource {
  const lower = value.toLowerCase();
  const named = df.stages.slice(0, current).find((s) => s.name === lower);
  if (named) return { kind: 'stage', index: named.index };
  if (/^[+-]?\d+$/.test(value)) {
    const ix = Number(value);
    if (ix === current) throw invalidParameter(`invalid from flag value ${value}: refers to current build stage`);
    if (ix < 0 || ix > current) throw invalidParameter(`invalid from flag value ${value}: index out of bounds`);
    return { kind: 'stage', index: ix };
  }
  return { kind: 'image', ref: value };
}

/**
 * The plan of a build: the target, the stages up to it in order, each stage's base. `buildArgs`
 * are the request's; `automaticArgs` (platformArgs) precede the meta ARGs, applied here. COPY --from values holding variables are
 * resolved with the meta ARGs (stage ARGs are not known before the stage runs); one that does not
 * name a stage then is treated as an image.
 */
export function planStages(df: Dockerfile, opts: { target?: string; buildArgs?: BuildArgOptions; automaticArgs?: Record<string, string> } = {}): StagePlan {
  checkNames(df);
  const target = findTarget(df, opts.target);
  const args = new BuildArgs(opts.buildArgs ?? {});
  if (opts.automaticArgs) applyAutomaticArgs(args, opts.automaticArgs);
  applyMetaArgs(df.metaArgs, args, df.escapeChar);
  const bases = new Map<number, StageSource>();
  const platforms = new Map<number, string>();
  const needed = new Set<number>();
  const visit = (index: number): void => {
    if (needed.has(index)) return;
    needed.add(index);
    const stage = df.stages[index]!;
    const name = expandWithMeta(stage.from.image, args, df.escapeChar);
    const base = resolveFrom(df, index, name, stage.from.image);
    bases.set(index, base);
    // An empty expansion means the build's platform (dockerd failed to parse "" instead).
    const platform = stage.from.platform ? expandWithMeta(stage.from.platform, args, df.escapeChar) : '';
    if (platform) platforms.set(index, platform);
    if (base.kind === 'stage') visit(base.index);
    for (const inst of stage.instructions) {
      if (inst.kind !== 'COPY' || inst.from === undefined) continue;
      const from = resolveCopyFrom(df, index, expandWithMeta(inst.from, args, df.escapeChar));
      if (from.kind === 'stage') visit(from.index);
    }
  };
  // The classic builder runs every stage up to the target, needed or not (BuildKit would skip them).
  for (let i = 0; i <= target.index; i++) visit(i);
  return { target, order: [...needed].sort((a, b) => a - b), bases, platforms, args };
}
