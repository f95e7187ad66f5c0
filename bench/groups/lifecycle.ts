// The lifecycle groups: one container at a time against the containerd and runc floors, and 50
// containers eight at a time.

import { mkdtemp } from 'node:fs/promises';
import { join } from 'node:path';
import { progress } from '../lib/options.ts';
import { interleave } from '../lib/stats.ts';
import { workDirs } from '../lib/tracked.ts';
import { apiLifecycle, NETWORK_NONE, type ApiPhases } from '../scenarios/api-lifecycle.ts';
import { captureEnginedSpec } from '../scenarios/engined-spec.ts';
import { ContainerdFloor, type FloorPhases } from '../scenarios/floor.ts';
import { parallelWall } from '../scenarios/parallel.ts';
import { RuncRun } from '../scenarios/runc-run.ts';
import { spawnTrue } from '../scenarios/spawn-cost.ts';
import { andDockerd, bothKinds, type GroupContext } from './context.ts';

export async function lifecycleGroup(c: GroupContext): Promise<void> {
  const { engined, dockerd, it } = c;
  const work = await mkdtemp('/tmp/bench-w-');
  workDirs.add(work);
  const floor = await ContainerdFloor.open(engined.containerdSocket, join(work, 'floor'));
  const runc = await RuncRun.prepare(join(work, 'runc'));
  const enginedSpec = await captureEnginedSpec(engined, join(work, 'engined-spec'));
  progress(
    `single lifecycle, taking turns: engined none/default${andDockerd(c, ', dockerd none')}, containerd floor (2 specs), runc run (${it.warmups} warm-ups + ${it.n} each)`,
  );
  try {
    const r = await interleave(it.n, it.warmups, {
      enginedNone: () => apiLifecycle(engined, NETWORK_NONE),
      enginedDefault: () => apiLifecycle(engined, {}),
      ...(dockerd ? { dockerdNone: () => apiLifecycle(dockerd, NETWORK_NONE) } : {}),
      floor: () => floor.once(),
      floorEnginedSpec: () => floor.once(enginedSpec),
      runc: () => runc.once(),
      spawn: () => spawnTrue(),
    } as Record<string, () => Promise<unknown>>);
    c.res.lifecycle = {
      enginedNone: r.enginedNone as ApiPhases[],
      enginedDefault: r.enginedDefault as ApiPhases[],
      ...(r.dockerdNone ? { dockerdNone: r.dockerdNone as ApiPhases[] } : {}),
      floor: r.floor as FloorPhases[],
      floorEnginedSpec: r.floorEnginedSpec as FloorPhases[],
      runc: r.runc as number[],
      spawn: r.spawn as number[],
    };
  } finally {
    floor.close();
  }
}

export async function parallelGroup(c: GroupContext): Promise<void> {
  progress(`50 containers, 8 at a time: ${c.it.parallelRuns}× engined${andDockerd(c)}`);
  c.res.parallel = await interleave(c.it.parallelRuns, 0, bothKinds(c, parallelWall));
}
