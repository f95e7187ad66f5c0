// Steps that write into the image's filesystem directly, on a snapshot of the parent (no
// container): WORKDIR creates its directory (owned by the stage's USER when it resolves to ids,
// as dockerd does); COPY and ADD go through the FsSteps the context module provides.
import { mkdir } from 'node:fs/promises';
import { posix } from 'node:path';
import { DEFAULT_SHELL, nopCreatedBy } from './config-steps.ts';
import type { StageState, StepContext, StepPlan } from './step-context.ts';

import { followSymlinkInScope } from './context/scoped-path.ts';

/** WORKDIR relative to the current one; the result is what Config.WorkingDir holds. */
export function resolveWorkdir(current: string | undefined, path: string): string {
  return posix.resolve(current || '/', path);
}

export function workdirStep(b: StepContext, state: StageState, path: string): StepPlan {
  const dir = resolveWorkdir(state.runtime.WorkingDir, path);
  state.runtime.WorkingDir = dir;
  const shell = state.runtime.Shell?.length ? state.runtime.Shell : DEFAULT_SHELL;
  const parent = state.image;
  return {
    createdBy: nopCreatedBy(shell, `WORKDIR ${dir}`),
    kind: 'internal',
    execute: (lease) => b.d.writer.fsLayer(parent, lease, async (root) => {
      await mkdir(followSymlinkInScope(posix.join(root, dir), root), { recursive: true, mode: 0o755 });
    }),
  };
}
