// Groups that start daemons of their own: start-up (a fresh daemon per sample) and networking
// (daemons with bridges, which the shared ones may lack).

import { interleave } from '../lib/stats.ts';
import { progress, type Iterations } from '../lib/options.ts';
import { alive, startTracked, stopTracked } from '../lib/tracked.ts';
import { networkCases, startDockerdWithBridge, startEnginedWithBridge } from '../scenarios/network.ts';
import { startupSamples } from '../scenarios/startup.ts';
import type { StartupMarks } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';
import { Engined } from '../targets/engined.ts';
import type { Results } from '../results.ts';

export async function startupGroup(res: Results, it: Iterations, useDockerd: boolean): Promise<void> {
  progress(`start-up: ${it.startups}× engined${useDockerd ? ' and dockerd, taking turns' : ''}`);
  const r = await interleave(it.startups, 0, {
    engined: () => startupSamples(1, () => Engined.start(), alive),
    ...(useDockerd ? { dockerd: () => startupSamples(1, () => Dockerd.start(), alive) } : {}),
  } as Record<string, () => Promise<StartupMarks[]>>);
  res.startup = { engined: r.engined!.flat(), ...(r.dockerd ? { dockerd: r.dockerd.flat() } : {}) };
}

export async function networkGroup(res: Results, it: Iterations, useDockerd: boolean): Promise<void> {
  progress('network: starting engined and dockerd with bridges of their own');
  const engined = (await startTracked(() => startEnginedWithBridge())).daemon;
  let dockerdCleanup: (() => Promise<void>) | null = null;
  let dockerd: Dockerd | null = null;
  try {
    if (useDockerd) {
      const r = await startDockerdWithBridge();
      alive.add(r.daemon);
      dockerd = r.daemon;
      dockerdCleanup = r.cleanup;
    }
    await engined.loadBusybox();
    if (dockerd) await dockerd.loadBusybox();
    progress(`network: API lifecycle and docker run --rm, bridge vs none, ${it.netWarmups} warm-ups + ${it.netN}, taking turns`);
    res.network = await interleave(it.netN, it.netWarmups, { ...networkCases(engined), ...(dockerd ? networkCases(dockerd) : {}) });
  } finally {
    await stopTracked(engined);
    if (dockerd) await stopTracked(dockerd);
    await dockerdCleanup?.();
  }
}
