// Build arguments with the scoping rules of dockerd's classic builder (builder/dockerfile
// buildargs.go): `--build-arg` values override ARG defaults; an ARG is visible only after it is
// declared in the stage (meta ARGs, before the first FROM, only in FROM lines and as the default of
// a bare `ARG name` inside a stage); ENV wins over ARG of the same name; the predefined proxy
// variables can be passed without any ARG and are kept out of the image history unless declared;
// build-args no ARG ever declared are reported as not consumed.
import { envFromList, expandWord, type EnvLookup } from './shell-words.ts';
import type { ArgInstruction, EscapeChar } from './types.ts';

/** The ARGs every Dockerfile may use without declaring them. */
export const PROXY_ARGS: ReadonlySet<string> = new Set([
  'HTTP_PROXY', 'http_proxy', 'HTTPS_PROXY', 'https_proxy', 'FTP_PROXY', 'ftp_proxy',
  'NO_PROXY', 'no_proxy', 'ALL_PROXY', 'all_proxy',
]);

/** `buildargs` of the request: a null value (`--build-arg NAME` with NAME unset) means not given. */
export type BuildArgOptions = Record<string, string | null | undefined>;

const envKey = (kv: string) => {
  const eq = kv.indexOf('=');
  return eq < 0 ? kv : kv.slice(0, eq);
};

export class BuildArgs {
  /** ARGs declared in the current stage: name → expanded default (undefined: none). */
  private allowed = new Map<string, string | undefined>();
  private readonly meta: Map<string, string | undefined>;
  private readonly referenced: Set<string>;

  constructor(readonly options: BuildArgOptions, shared?: { meta: Map<string, string | undefined>; referenced: Set<string> }) {
    this.meta = shared?.meta ?? new Map();
    this.referenced = shared?.referenced ?? new Set();
  }

  /** A fresh scope for the next stage: meta ARGs and the consumed set carry over, stage ARGs do not. */
  forStage(): BuildArgs {
    return new BuildArgs(this.options, { meta: this.meta, referenced: this.referenced });
  }

  private option(name: string): string | undefined {
    const v = Object.hasOwn(this.options, name) ? this.options[name] : undefined;
    return v ?? undefined;
  }

  /** An `ARG name[=default]` (default already expanded). */
  declare(name: string, value: string | undefined): void {
    this.allowed.set(name, value);
    this.referenced.add(name);
  }

  /** A meta ARG (before the first FROM): declared for the meta scope and remembered for FROM. */
  declareMeta(name: string, value: string | undefined): void {
    this.declare(name, value);
    this.meta.set(name, value);
  }

  private resolve(name: string, mapping: Map<string, string | undefined>): string | undefined {
    const opt = this.option(name);
    if (opt !== undefined) return opt;
    const def = mapping.get(name);
    if (def === undefined) return this.meta.get(name);
    return def;
  }

  private all(mapping: Map<string, string | undefined>): Map<string, string> {
    const out = new Map<string, string>();
    for (const name of [...mapping.keys(), ...PROXY_ARGS]) {
      if (out.has(name)) continue;
      // Undeclared proxy args come only from the request (or a meta ARG of that name).
      const v = mapping.has(name) ? this.resolve(name, mapping) : (this.option(name) ?? this.meta.get(name));
      if (v !== undefined) out.set(name, v);
    }
    return out;
  }

  /** The ARG values visible in the current stage (declared ones plus any proxy args given). */
  allowedValues(): Map<string, string> {
    return this.all(this.allowed);
  }

  /** The values FROM lines see: meta ARGs plus proxy args given. */
  metaValues(): Map<string, string> {
    return this.all(this.meta);
  }

  /** `KEY=value` for each visible ARG not shadowed by an ENV of the same name (RUN's extra env). */
  filterAllowed(env: readonly string[]): string[] {
    const shadow = new Set(env.map(envKey));
    return [...this.allowedValues()].filter(([k]) => !shadow.has(k)).map(([k, v]) => `${k}=${v}`);
  }

  /**
   * The variables Docker writes before a RUN command in history and the cache key
   * (`|2 A=1 B=2 /bin/sh -c …`): sorted, without proxy args that no ARG declared.
   */
  historyArgs(env: readonly string[]): string[] {
    return this.filterAllowed(env).filter((kv) => {
      const k = envKey(kv);
      return this.allowed.has(k) || !PROXY_ARGS.has(k);
    }).sort();
  }

  /** The lookup instructions expand with: the stage's ENV first, then the visible ARGs. */
  expansionEnv(env: readonly string[]): EnvLookup {
    return envFromList([...this.filterAllowed(env), ...env]);
  }

  /** Build-args that no ARG declared (proxy args excepted), sorted. */
  unconsumed(): string[] {
    return Object.keys(this.options).filter((k) => !this.referenced.has(k) && !PROXY_ARGS.has(k)).sort();
  }
}

/** Docker's warning for unconsumed build-args, or null when every one was used. */
export function unconsumedWarning(args: BuildArgs): string | null {
  const left = args.unconsumed();
  return left.length ? `[Warning] One or more build-args [${left.join(' ')}] were not consumed` : null;
}

/**
 * Dispatches the meta ARGs in order: each default is expanded with the ARGs before it (and the
 * request's build-args, which override defaults).
 */
export function applyMetaArgs(metaArgs: readonly ArgInstruction[], args: BuildArgs, escape: EscapeChar = '\\'): void {
  for (const inst of metaArgs) {
    const env = envFromList([...args.allowedValues()].map(([k, v]) => `${k}=${v}`));
    for (const a of inst.args) {
      const name = expandWord(a.name, env, escape);
      const value = a.default === undefined ? undefined : expandWord(a.default, env, escape);
      args.declareMeta(name, value);
    }
  }
}

/**
 * BuildKit's automatic platform ARGs (BUILDPLATFORM, TARGETARCH …). dockerd's classic builder had
 * none, so `FROM --platform=$BUILDPLATFORM` expanded to nothing there; given to planStages they
 * behave as meta ARGs with defaults: usable in FROM, and in a stage after a bare `ARG TARGETARCH`.
 */
export function platformArgs(build: { os: string; architecture: string; variant?: string }, target = build): Record<string, string> {
  const spec = (p: typeof build) => [p.os, p.architecture, p.variant].filter(Boolean).join('/');
  return {
    BUILDPLATFORM: spec(build), BUILDOS: build.os, BUILDARCH: build.architecture, BUILDVARIANT: build.variant ?? '',
    TARGETPLATFORM: spec(target), TARGETOS: target.os, TARGETARCH: target.architecture, TARGETVARIANT: target.variant ?? '',
  };
}

/** Automatic ARGs as meta ARGs with defaults, declared before the Dockerfile's own. */
export function applyAutomaticArgs(args: BuildArgs, automatic: Record<string, string>): void {
  for (const [name, value] of Object.entries(automatic)) args.declareMeta(name, value);
}

/** A FROM word (image, platform) expanded with the meta ARGs. */
export function expandWithMeta(word: string, args: BuildArgs, escape: EscapeChar = '\\'): string {
  const env = envFromList([...args.metaValues()].map(([k, v]) => `${k}=${v}`));
  return expandWord(word, env, escape);
}
