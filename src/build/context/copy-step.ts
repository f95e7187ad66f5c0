// One COPY or ADD step, executor-agnostic: planCopyStep resolves the (already expanded) sources,
// checks the destination rule, and computes the content checksum and dockerd's history comment
// (`COPY --chown=app file:<sum> in /app `) before any cache lookup; run() then writes into the
// step's mounted filesystem, resolving --chown in *that* filesystem's /etc/passwd and /etc/group
// as dockerd does. Owners: root by default; --chown's ids; the sources' own for `COPY --from`
// without --chown.
import { posix } from 'node:path';
import type { AddInstruction, CopyInstruction } from '../dockerfile/types.ts';
import { checksumSources } from './checksum.ts';
import { resolveSources, type CopySource } from './copy-sources.ts';
import { checkDestForSources, copySources, normalizeDest, parseChmod, resolveChown, type CopyResult } from './copy.ts';

export interface CopyStepInput {
  /** The instruction with its words expanded (expandInstruction). */
  inst: CopyInstruction | AddInstruction;
  /** Where sources are read: the extracted context, or the filesystem of the `--from` stage or image. */
  sourceRoot: string;
  /** Whether sourceRoot is the build context (false for --from). */
  fromContext: boolean;
  /** The stage's WORKDIR (relative destinations are resolved against it). */
  workdir: string;
  /** A directory for ADD's downloads (the caller removes it after the step). */
  tmpDir: string;
  signal?: AbortSignal;
  /** ADD downloads' progress (see ResolveOptions.onProgress). */
  onProgress?: (url: string, received: number, total: number | undefined) => void;
}

export interface CopyStepPlan {
  sources: CopySource[];
  /** The destination, absolute in the image (a trailing `/` kept). */
  dest: string;
  /** `file:<hex>`, `dir:<hex>` or `multi:<hex>`, as dockerd names the sources in history. */
  srcHash: string;
  /** dockerd's history comment for the step, e.g. `COPY file:<hex> in /app ` (prefix with the shell and `#(nop) `). */
  comment: string;
  /** `sha256:<hex>` of the sources' names, modes, owners and data: the cache key's content part. */
  checksum: string;
  /**
   * Writes the sources into `rootfs` (the step's mounted snapshot); `direct`: it is an overlay
   * whose upper directory may be written after the unmount (CopyResult.afterUnmount, copy.ts).
   */
  run(rootfs: string, direct?: boolean): Promise<CopyResult>;
}

export async function planCopyStep(input: CopyStepInput): Promise<CopyStepPlan> {
  const { inst } = input;
  const cmd = inst.kind;
  const mode = inst.chmod ? parseChmod(inst.chmod) : undefined;
  const preserveOwners = cmd === 'COPY' && !input.fromContext && !inst.chown;
  const sources = await resolveSources(input.sourceRoot, inst.sources, {
    cmd, dest: inst.dest, isContext: input.fromContext, tmpDir: input.tmpDir, signal: input.signal, onProgress: input.onProgress,
  });
  checkDestForSources(cmd, sources.length, inst.dest);
  const dest = normalizeDest(input.workdir, inst.dest);
  // The owner is known only when the step runs (names resolve in its filesystem); the key holds
  // the --chown text through the comment, and the sources' owners only when they are kept.
  const checksum = await checksumSources(sources, { owner: preserveOwners ? undefined : { uid: 0, gid: 0 }, mode });
  const hex = checksum.slice('sha256:'.length);
  const srcHash = sources.length > 1 ? `multi:${hex}` : `${sources[0]!.isDir ? 'dir' : 'file'}:${hex}`;
  const chownText = inst.chown ? `--chown=${inst.chown} ` : '';
  const chmodText = inst.chmod ? `--chmod=${inst.chmod} ` : '';
  const comment = `${cmd} ${chownText}${chmodText}${srcHash} in ${inst.dest} `;
  return {
    sources, dest, srcHash, comment, checksum,
    run: (rootfs, direct) => {
      const owner = inst.chown ? resolveChown(inst.chown, posix.resolve(rootfs)) : preserveOwners ? undefined : { uid: 0, gid: 0 };
      return copySources(sources, rootfs, dest, { owner, mode, decompress: cmd === 'ADD', direct: direct === true });
    },
  };
}
