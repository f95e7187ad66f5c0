// `docker commit` through the API: a stopped busybox container that wrote 10 MiB of random data
// (plus a deleted file and a directory replaced, so whiteouts and an opaque directory are in its
// layer) is committed; only the POST /commit is timed. Container and image are removed afterwards.

import { api } from '../lib/http.ts';
import { cpuMeter } from '../lib/proc.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer, removeContainer } from './api-lifecycle.ts';

export const COMMIT_BYTES = 10 * 2 ** 20;
const SCRIPT = `head -c ${COMMIT_BYTES} /dev/urandom > /data.bin && rm -f /bin/vi && rm -rf /home && mkdir /home && echo x > /home/f`;
let seq = 0;

export interface CommitRun {
  ms: number;
  /** CPU ms of the daemon and of its containerd during the POST (helper processes not counted). */
  cpu: { daemon: number; containerd: number };
}

/** One commit: the POST alone, wall and CPU. */
export async function commitOnce(d: DaemonUnderTest): Promise<CommitRun> {
  const id = await createContainer(d, ['sh', '-c', SCRIPT]);
  const tag = `c${process.pid}-${seq++}`;
  try {
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    const w = await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    if (w.json<{ StatusCode: number }>().StatusCode !== 0) throw new Error(`${d.kind}: commit writer exited non-zero`);
    const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
    const t0 = performance.now();
    await api(d.socket, 'POST', `/commit?container=${id}&repo=benchcommit&tag=${tag}`, undefined, [201]);
    return { ms: performance.now() - t0, cpu: cpu() };
  } finally {
    await removeContainer(d, id).catch(() => undefined);
    await api(d.socket, 'DELETE', `/images/benchcommit:${tag}`, undefined, [200]).catch(() => undefined);
  }
}
