// Pull from a local registry (Debian's docker-registry, started here): an image of 4 layers of 50 MiB
// of random data each (gzip level 1: incompressible, ~210 MB on the wire), pushed once; each run
// pulls it through POST /images/create on an empty image store (the image removed and, for
// engined, containerd's garbage collection run synchronously afterwards), wall time and CPU of the
// daemon + its containerd.

import { randomBytes } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../../test/helpers/registry.ts';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { api } from '../lib/http.ts';
import { cpuMeter, threadCpu, threadCpuSince } from '../lib/proc.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';

export const PULL_LAYERS = 4;
const LAYER_BYTES = 50 * 2 ** 20;

export interface PullImage {
  registry: TestRegistry;
  /** host:port/bench-pull */
  repo: string;
  tag: string;
  mb: number;
}

export interface PullRun {
  ms: number;
  cpu: { daemon: number; containerd: number };
  /** The daemon's CPU ms in the pull by thread kind (main, WorkerThread, libuv-worker, V8Worker…). */
  threads: Map<string, number>;
}

/** The registry with the bench image pushed; `shape` changes its layers (default 4 × 50 MiB). */
export async function startPullRegistry(shape: { layers?: number; layerBytes?: number } = {}): Promise<PullImage> {
  const registry = await startRegistry();
  try {
    const diffIds: string[] = [];
    const layers: Array<{ mediaType: string; data: Buffer }> = [];
    for (let i = 0; i < (shape.layers ?? PULL_LAYERS); i++) {
      const tar = await tarToBuffer(async (tw) => {
        await tw.file(`layer${i}.bin`, randomBytes(shape.layerBytes ?? LAYER_BYTES), { mtime: 1704067200 });
      });
      diffIds.push(sha256(tar));
      layers.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: gzipSync(tar, { level: 1 }) });
    }
    const config = { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: diffIds } };
    await pushRawImage(`http://${registry.host}`, 'bench-pull', 'v1', { config, layers });
    const mb = layers.reduce((n, l) => n + l.data.length, 0) / 1e6;
    return { registry, repo: `${registry.host}/bench-pull`, tag: 'v1', mb };
  } catch (err) {
    await registry.cleanup();
    throw err;
  }
}

/** One pull on an empty store, then the image removed again (not timed). */
export async function pullOnce(d: DaemonUnderTest & { containerdSocket?: string }, img: PullImage): Promise<PullRun> {
  const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
  const th0 = threadCpu(d.pid);
  const t0 = performance.now();
  const r = await api(d.socket, 'POST', `/images/create?fromImage=${encodeURIComponent(img.repo)}&tag=${img.tag}`, undefined, [200]);
  const ms = performance.now() - t0;
  const run = { ms, cpu: cpu(), threads: threadCpuSince(th0, threadCpu(d.pid)) };
  const text = r.text();
  if (/"error(Detail)?"/.test(text)) throw new Error(`${d.kind}: pull failed: ${text.slice(-500)}`);
  await api(d.socket, 'DELETE', `/images/${encodeURIComponent(`${img.repo}:${img.tag}`)}`, undefined, [200]);
  if (d.kind === 'engined' && d.containerdSocket) {
    // The blobs and snapshots go at containerd's next GC; a synchronous one makes the next pull fresh.
    const c = new SupervisorClient(d.containerdSocket, { namespace: 'engine' });
    try {
      await c.withLease(async () => undefined, { sync: true });
    } finally {
      c.close();
    }
  }
  return run;
}
