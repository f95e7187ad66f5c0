// Many short containers at once: `count` lifecycles of `true`, `width` in flight; total wall time.

import { pool } from '../lib/stats.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { apiLifecycle } from './api-lifecycle.ts';

export async function parallelWall(d: DaemonUnderTest, count = 50, width = 8): Promise<number> {
  const t0 = performance.now();
  await pool(count, width, async () => {
    await apiLifecycle(d);
  });
  return performance.now() - t0;
}
