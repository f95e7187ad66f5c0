// Issue 25: a pull must not cost hundreds of MiB, and its memory must go soon after it. A fresh
// daemon pulls a generated image of 2 × 50 MiB random layers (gzip level 1, ~105 MB) from a local
// registry; its peak RSS (sampled every 20 ms and VmHWM, reset through /proc/<pid>/clear_refs
// before the pull) must stay within PEAK MiB of its idle RSS before, its RSS 5 s after the pull
// within SETTLED MiB of it, and the pull may start no more threads than its stage workers (one on a
// host of ≤ 2 cores, else two: stage-pool.ts; a pull's small WAL is checkpointed on the daemon's
// thread, store/checkpointer.ts). Measured on a 2-core machine at load 15–25: +40–44 MiB at the
// peak, +2 MiB at +2…+8 s, one thread more; the code before (two stage workers and a checkpointer
// worker) +43–48 MiB, three threads more; the code before that (one or two stage workers per
// layer, each kept 30 s after its last layer) +185–223 MiB at the peak and +152 MiB still 10 s
// after. Memory, unlike time, suffers little from load (GC and trim timing, which the margins
// cover).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import { gzipSync } from 'node:zlib';
import { after, before, describe, test } from 'node:test';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../helpers/registry.ts';

const MiB = 1 << 20;
const LAYERS = 2;
/** MiB above the idle RSS that the daemon must be back within 5 s after the pull. */
const SETTLED = 25;
/** MiB above the idle RSS the pull may peak at. */
const PEAK = 70;
/** Threads a pull may add: its stage workers (stage-pool.ts POOL_MAX). */
const WORKERS = availableParallelism() > 2 ? 2 : 1;

function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `${field} of ${pid}`);
  return Number(m[1]) / 1024;
}

function threads(pid: number): number {
  return Number(/^Threads:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1]);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('pull: daemon memory at the peak and after', () => {
  let d: TestDaemon;
  let reg: TestRegistry;
  before(async () => {
    reg = await startRegistry();
    const diffIds: string[] = [];
    const layers: Array<{ mediaType: string; data: Buffer }> = [];
    for (let i = 0; i < LAYERS; i++) {
      const tar = await tarToBuffer(async (tw) => {
        await tw.file(`layer${i}.bin`, randomBytes(50 * MiB), { mtime: 1704067200 });
      });
      diffIds.push(sha256(tar));
      layers.push({ mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: gzipSync(tar, { level: 1 }) });
    }
    const config = { architecture: 'amd64', os: 'linux', config: { Cmd: ['sh'] }, rootfs: { type: 'layers', diff_ids: diffIds } };
    await pushRawImage(`http://${reg.host}`, 'mem-pull', 'v1', { config, layers });
    d = await startDaemon({ args: ['--debug'] }); // --debug: a layer that falls back to the diff service says so
  });
  after(async () => {
    await d?.cleanup();
    await reg?.cleanup();
  });

  test(`a 100 MiB pull peaks within ${PEAK} MiB of the idle daemon, is back within ${SETTLED} MiB 5 s after, on ${WORKERS} worker thread(s)`, async () => {
    // Idle first: start-up's own memory settled (its trim runs after a quiet second).
    let idle = statusMiB(d.pid, 'VmRSS');
    for (let i = 0; i < 20; i++) {
      await sleep(500);
      const now = statusMiB(d.pid, 'VmRSS');
      if (Math.abs(now - idle) < 1) break;
      idle = now;
    }
    idle = statusMiB(d.pid, 'VmRSS');
    const idleThreads = threads(d.pid);
    writeFileSync(`/proc/${d.pid}/clear_refs`, '5'); // VmHWM := VmRSS
    // VmHWM is updated lazily (it can lag the RSS read right after): sampled RSS too.
    let sampled = 0;
    let peakThreads = 0;
    const sampler = setInterval(() => {
      sampled = Math.max(sampled, statusMiB(d.pid, 'VmRSS'));
      peakThreads = Math.max(peakThreads, threads(d.pid));
    }, 20);
    let r: Awaited<ReturnType<TestDaemon['request']>>;
    try {
      r = await d.request('POST', `/images/create?fromImage=${encodeURIComponent(`${reg.host}/mem-pull`)}&tag=v1`);
    } finally {
      clearInterval(sampler);
    }
    assert.equal(r.status, 200);
    assert.match(r.text(), /Status: Downloaded newer image/, r.text().slice(-800));
    let peak = Math.max(sampled, statusMiB(d.pid, 'VmHWM'), statusMiB(d.pid, 'VmRSS')) - idle;
    const pulledAt = performance.now();
    let settled = Infinity;
    const readings: string[] = [];
    for (let t = 250; t <= 5_000; t += 250) {
      await sleep(pulledAt + t - performance.now());
      const now = statusMiB(d.pid, 'VmRSS') - idle;
      settled = now;
      peak = Math.max(peak, now);
      if (t % 1000 === 0) readings.push(`+${t / 1000}s ${now.toFixed(0)}`);
    }
    const msg = `idle ${idle.toFixed(0)} MiB, ${idleThreads} threads; peak +${peak.toFixed(0)} MiB, ${peakThreads} threads; after the pull (MiB above idle): ${readings.join(', ')}`;
    process.stderr.write(`${msg}\n`);
    // Staged by the workers, not handed to containerd's diff service (which would spare the daemon).
    assert.doesNotMatch(d.output, /goes through the diff service/);
    assert.ok(peak < PEAK, msg);
    assert.ok(settled <= SETTLED, msg);
    assert.ok(peakThreads - idleThreads <= WORKERS, msg);
  });
});
