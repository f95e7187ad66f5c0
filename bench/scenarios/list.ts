// GET /containers/json?all=1 with many created (never started) containers; optionally again after
// growing to `scaleTo` containers (created 16 at a time), for the cost per container.

import { api } from '../lib/http.ts';
import { pool, repeat } from '../lib/stats.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer, removeContainer } from './api-lifecycle.ts';

export interface ListResult {
  createAllMs: number;
  listMs: number[];
  removeAllMs: number;
  listed: number;
  /** The same list with `containers` containers, when asked to grow. */
  scale?: { containers: number; listMs: number[] };
}

export async function listScenario(d: DaemonUnderTest, containers: number, n: number, warmups: number, scaleTo = 0): Promise<ListResult> {
  const ids: string[] = [];
  let t0 = performance.now();
  try {
    await pool(containers, 8, async () => {
      ids.push(await createContainer(d, ['true']));
    });
    const createAllMs = performance.now() - t0;
    let listed = 0;
    const listMs = await repeat(n, warmups, async () => {
      const s = performance.now();
      const r = await api(d.socket, 'GET', '/containers/json?all=1', undefined, [200]);
      const ms = performance.now() - s;
      listed = r.json<unknown[]>().length;
      return ms;
    });
    if (listed < containers) throw new Error(`${d.kind}: listed ${listed} containers, created ${containers}`);
    let scale: ListResult['scale'];
    if (scaleTo > containers) {
      await pool(scaleTo - containers, 16, async () => {
        ids.push(await createContainer(d, ['true']));
      });
      const ms = await repeat(n, warmups, async () => {
        const s = performance.now();
        const r = await api(d.socket, 'GET', '/containers/json?all=1', undefined, [200]);
        const took = performance.now() - s;
        if (r.json<unknown[]>().length < scaleTo) throw new Error(`${d.kind}: listed fewer than ${scaleTo} containers`);
        return took;
      });
      scale = { containers: scaleTo, listMs: ms };
    }
    t0 = performance.now();
    const left = ids.splice(0);
    await pool(left.length, 8, async (i) => removeContainer(d, left[i]!));
    return { createAllMs, listMs, removeAllMs: performance.now() - t0, listed, ...(scale ? { scale } : {}) };
  } finally {
    // On failure: remove what is left so the next scenario starts clean (best effort).
    await pool(ids.length, 8, async (i) => removeContainer(d, ids[i]!).catch(() => undefined));
  }
}
