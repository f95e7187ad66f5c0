// What every scenario group gets: the options, iteration counts, the results it fills and the two
// daemons under test (dockerd absent with --no-dockerd or when it cannot start).

import type { Iterations, Options } from '../lib/options.ts';
import type { Results } from '../results.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import type { Dockerd } from '../targets/dockerd.ts';
import type { Engined } from '../targets/engined.ts';

export interface GroupContext {
  opts: Options;
  it: Iterations;
  res: Results;
  engined: Engined;
  dockerd: Dockerd | null;
}

/** engined and, when present, dockerd as `interleave` cases with one function for both. */
export function bothKinds<R>(c: GroupContext, f: (d: DaemonUnderTest) => Promise<R>): Record<string, () => Promise<R>> {
  const { engined, dockerd } = c;
  return { engined: () => f(engined), ...(dockerd ? { dockerd: () => f(dockerd) } : {}) };
}

export const andDockerd = (c: GroupContext, s = ' and dockerd, taking turns') => (c.dockerd ? s : '');
