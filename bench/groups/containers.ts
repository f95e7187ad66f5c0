// Groups over many containers or inside one: listing, mass removal, the soak, exec and docker cp.

import { dirname, join } from 'node:path';
import { progress } from '../lib/options.ts';
import { teardownDir } from '../lib/proc.ts';
import { interleave } from '../lib/stats.ts';
import { workDirs } from '../lib/tracked.ts';
import { cpOnce, makeCpTree } from '../scenarios/cp.ts';
import { execTrue, sleeper } from '../scenarios/exec.ts';
import { listScenario } from '../scenarios/list.ts';
import { removeOnce } from '../scenarios/remove.ts';
import { soak } from '../scenarios/soak.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { andDockerd, type GroupContext } from './context.ts';

export async function listGroup(c: GroupContext): Promise<void> {
  const { it } = c;
  for (const d of c.dockerd ? [c.engined, c.dockerd] : [c.engined]) {
    progress(`list: ${it.listContainers} created containers, ${d.kind}`);
    c.res.list[d.kind] = await listScenario(d, it.listContainers, it.listN, it.listWarmups, it.listScaleTo);
  }
}

export async function removeGroup(c: GroupContext): Promise<void> {
  const { engined, dockerd } = c;
  // Each count on each daemon in turn (engined first for the small count, dockerd for the large).
  const removeCounts = c.opts.quick ? [200, 800] : [500, 2000];
  for (const [k, count] of removeCounts.entries()) {
    const order = dockerd && k % 2 ? [dockerd, engined] : dockerd ? [engined, dockerd] : [engined];
    for (const d of order) {
      progress(`remove: ${count} created containers, 8 at a time, ${d.kind}`);
      (c.res.remove[d.kind] ??= []).push(await removeOnce(d, count));
    }
  }
}

export async function soakGroup(c: GroupContext): Promise<void> {
  progress(`soak: ${c.opts.soakCount} sequential lifecycles on engined`);
  c.res.soak = await soak(c.engined, c.opts.soakCount, progress);
}

/** Runs `f` with a running sleep container on each daemon, removed afterwards. */
async function withSleepers<R>(
  c: GroupContext,
  f: (cases: (run: (d: DaemonUnderTest, id: string) => Promise<R>) => Record<string, () => Promise<R>>) => Promise<void>,
): Promise<void> {
  const se = await sleeper(c.engined);
  const sd = c.dockerd ? await sleeper(c.dockerd) : null;
  const dockerd = c.dockerd;
  try {
    await f((run) => ({
      engined: () => run(c.engined, se.id),
      ...(dockerd && sd ? { dockerd: () => run(dockerd, sd.id) } : {}),
    }));
  } finally {
    await se.remove().catch((e) => progress(`removing the engined sleeper: ${(e as Error).message}`));
    await sd?.remove().catch((e) => progress(`removing the dockerd sleeper: ${(e as Error).message}`));
  }
}

export async function execGroup(c: GroupContext): Promise<void> {
  const { it } = c;
  progress(`exec of \`true\` in a running sleep container: ${it.execWarmups} warm-ups + ${it.execN}, engined${andDockerd(c)}`);
  await withSleepers<number>(c, async (cases) => {
    c.res.exec = await interleave(it.execN, it.execWarmups, cases(execTrue));
  });
}

export async function cpGroup(c: GroupContext): Promise<void> {
  const tree = await makeCpTree();
  const work = dirname(tree);
  workDirs.add(work);
  progress(`docker cp of 100 MiB in and out: ${c.it.cpRuns}× engined${andDockerd(c)}`);
  try {
    await withSleepers(c, async (cases) => {
      c.res.cp = await interleave(
        c.it.cpRuns,
        0,
        cases((d, id) => cpOnce(d, id, tree, join(work, `out-${d.kind}`))),
      );
    });
  } finally {
    await teardownDir(work).catch((e) => progress(`removing ${work}: ${(e as Error).message}`));
    workDirs.delete(work);
  }
}
