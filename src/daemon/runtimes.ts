// The OCI runtimes containers can run with: `runc` built in; more from --add-runtime / `runtimes`
// (a drop-in runc replacement by path, with runtimeArgs through a generated wrapper script, or a
// shim of its own by runtimeType); a containerd shim on PATH chosen by its name.
import { accessSync, constants, mkdirSync, writeFileSync } from 'node:fs';
import { delimiter, isAbsolute, join } from 'node:path';
import type { RuntimeSpec } from '../config/daemon-config.ts';
import { invalidParameter } from '../errors.ts';

export const BUILTIN_RUNTIME = 'runc';
export const RUNC_SHIM = 'io.containerd.runc.v2';

export interface ResolvedRuntime {
  name: string;
  /** containerd runtime name (shim), e.g. io.containerd.runc.v2. */
  shim: string;
  /** For runc-compatible runtimes: the binary the runc shim executes. */
  binary?: string;
  /** Shim options passed through (runtimeType form). */
  options?: Record<string, unknown>;
  /**
   * A `--root` among runtimeArgs: the runc shim passes its own --root after the wrapper's
   * arguments (and the last one wins), so it must be handed to the shim as its root option.
   */
  root?: string;
  /** As configured, for /info: the path and runtimeArgs the user gave. */
  configured?: { path?: string; runtimeArgs?: string[]; runtimeType?: string };
}

/** The value of `--root <dir>` / `--root=<dir>` in runtime arguments (the last one wins, as in runc). */
export function rootFromArgs(args: readonly string[]): string | undefined {
  let root: string | undefined;
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if ((a === '--root' || a === '-root') && i + 1 < args.length) root = args[++i];
    else if (a.startsWith('--root=') || a.startsWith('-root=')) root = a.slice(a.indexOf('=') + 1);
  }
  return root;
}

function onPath(name: string): string | undefined {
  for (const dir of (process.env.PATH ?? '/usr/sbin:/usr/bin:/sbin:/bin').split(delimiter)) {
    const p = join(dir, name);
    try {
      accessSync(p, constants.X_OK);
      return p;
    } catch {
      // ENOENT or EACCES: not in this directory of PATH, try the next
    }
  }
  return undefined;
}

export class RuntimeRegistry {
  private runtimes = new Map<string, ResolvedRuntime>();

  constructor(
    private readonly execRoot: string,
    configured: Record<string, RuntimeSpec>,
  ) {
    this.reload(configured);
  }

  /** Applied at start-up and on SIGHUP (`runtimes` and `default-runtime` are reloadable). */
  reload(configured: Record<string, RuntimeSpec>): void {
    const next = new Map<string, ResolvedRuntime>([[BUILTIN_RUNTIME, { name: BUILTIN_RUNTIME, shim: RUNC_SHIM, binary: 'runc' }]]);
    for (const [name, spec] of Object.entries(configured)) {
      if (name === BUILTIN_RUNTIME) continue;
      if (spec.runtimeType) {
        const o = spec.options ?? {};
        // The runc shim's own options (containerd's runc.v1 Options, as dockerd takes them).
        const runcLike =
          spec.runtimeType === RUNC_SHIM
            ? {
                ...(typeof o['BinaryName'] === 'string' && o['BinaryName'] ? { binary: o['BinaryName'] } : {}),
                ...(typeof o['Root'] === 'string' && o['Root'] ? { root: o['Root'] } : {}),
              }
            : {};
        next.set(name, {
          name,
          shim: spec.runtimeType,
          ...(spec.options ? { options: spec.options } : {}),
          ...runcLike,
          configured: { runtimeType: spec.runtimeType },
        });
      } else if (spec.path) {
        const args = spec.runtimeArgs ?? [];
        const root = rootFromArgs(args);
        next.set(name, {
          name,
          shim: RUNC_SHIM,
          binary: args.length ? this.wrapper(name, spec.path, args) : spec.path,
          ...(root ? { root } : {}),
          configured: { path: spec.path, ...(args.length ? { runtimeArgs: [...args] } : {}) },
        });
      }
    }
    this.runtimes = next;
  }

  /** runc's shim cannot pass extra arguments, so runtimeArgs live in a small exec wrapper (as dockerd does). */
  private wrapper(name: string, path: string, args: string[]): string {
    const dir = join(this.execRoot, 'runtimes');
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    const file = join(dir, name);
    const quoted = [path, ...args].map((a) => `'${a.replace(/'/g, `'\\''`)}'`).join(' ');
    writeFileSync(file, `#!/bin/sh\nexec ${quoted} "$@"\n`, { mode: 0o700 });
    return file;
  }

  names(): string[] {
    return [...this.runtimes.keys()];
  }

  has(name: string): boolean {
    return this.runtimes.has(name);
  }

  specs(): Record<string, { path?: string; runtimeArgs?: string[]; runtimeType?: string }> {
    const out: Record<string, { path?: string; runtimeArgs?: string[]; runtimeType?: string }> = {};
    for (const [n, r] of this.runtimes) out[n] = r.configured ?? (r.binary ? { path: r.binary } : { runtimeType: r.shim });
    return out;
  }

  /**
   * A registered name, or a containerd shim on PATH by its name (io.containerd.x.v1 →
   * containerd-shim-x-v1), which needs no registration (spec §2.3).
   */
  resolve(name: string): ResolvedRuntime {
    const known = this.runtimes.get(name);
    if (known) return known;
    const m = /^io\.containerd\.([a-z0-9_]+)\.(v[0-9]+)$/.exec(name);
    if (m && onPath(`containerd-shim-${m[1]}-${m[2]}`)) return { name, shim: name };
    if (isAbsolute(name)) throw invalidParameter(`unknown or invalid runtime name: ${name}`);
    throw invalidParameter(`unknown or invalid runtime name: ${name}`);
  }
}
