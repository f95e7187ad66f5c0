// Issue 13: the build context is streamed, never buffered whole. The daemon's peak resident memory
// (VmHWM, reset through /proc/<pid>/clear_refs before each build) over `COPY . /ctx` of a 256 MiB
// single-file context must stay within 64 MiB of its peak over a 16 MiB one: a daemon holding the
// context (or the layer, or a file) whole would add ≥ 240 MiB; measured here the two differ by a
// few MiB. Memory, unlike time, does not suffer from a loaded machine beyond GC timing, which the
// margin covers.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { closeSync, openSync, readFileSync, writeFileSync, writeSync } from 'node:fs';
import { randomFillSync } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const MiB = 1 << 20;

function statusMiB(pid: number, field: 'VmHWM' | 'VmRSS'): number {
  const m = new RegExp(`^${field}:\\s+(\\d+) kB$`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  assert.ok(m, `${field} of ${pid}`);
  return Number(m[1]) / 1024;
}

/** A context directory holding a Dockerfile and one file of `size` MiB of random data. */
async function context(root: string, name: string, size: number): Promise<string> {
  const dir = await mkdtemp(join(root, `${name}-`));
  await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\nCOPY . /ctx\n');
  const fd = openSync(join(dir, 'data.bin'), 'w');
  const buf = Buffer.allocUnsafe(MiB);
  try {
    for (let i = 0; i < size; i++) writeSync(fd, randomFillSync(buf));
  } finally {
    closeSync(fd);
  }
  return dir;
}

describe('docker build: daemon memory does not grow with the context', () => {
  let d: TestDaemon;
  let root: string;
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'build-mem-'));
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  /** The daemon's peak RSS above its RSS at the start, over one --no-cache build of `dir`. */
  const peakOver = async (dir: string): Promise<number> => {
    const before = statusMiB(d.pid, 'VmRSS');
    writeFileSync(`/proc/${d.pid}/clear_refs`, '5'); // VmHWM := VmRSS
    const r = await d.docker(['build', '-q', '--no-cache', '--network', 'none', dir], {
      env: { DOCKER_BUILDKIT: '0' },
      timeoutMs: 300_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    return statusMiB(d.pid, 'VmHWM') - before;
  };

  test('a 256 MiB context peaks within 64 MiB of a 16 MiB one', async () => {
    const small = await context(root, 'small', 16);
    await peakOver(small); // warms up the build path (code, caches, the young generation's size)
    const smallPeak = await peakOver(small);
    await rm(small, { recursive: true, force: true });
    const big = await context(root, 'big', 256);
    const bigPeak = await peakOver(big);
    await rm(big, { recursive: true, force: true });
    const msg = `peak RSS above the start: 16 MiB context +${smallPeak.toFixed(1)} MiB, 256 MiB context +${bigPeak.toFixed(1)} MiB`;
    process.stderr.write(`${msg}\n`);
    assert.ok(bigPeak - smallPeak < 64, msg);
  });
});
