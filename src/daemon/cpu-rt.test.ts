import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import type { EngineError } from '../errors.ts';
import { applyCpuRealtime, findCpuMount, ownCpuCgroup, realtimeLevels } from './cpu-rt.ts';

test('nothing to do when neither value is set, whatever the layout', () => {
  assert.deepEqual(applyCpuRealtime({ cgroupParent: '/engine', layout: 'v2' }), []);
  assert.deepEqual(applyCpuRealtime({ period: 0, runtime: 0, cgroupParent: '/engine', layout: 'v1' }), []);
});

test("cgroup v2 refuses the options with dockerd's message", () => {
  assert.throws(
    () => applyCpuRealtime({ runtime: 1000, cgroupParent: '/engine', layout: 'v2' }),
    (err: EngineError) => {
      assert.equal(err.status, 400);
      assert.equal(err.message, 'daemon-scoped cpu-rt-period and cpu-rt-runtime are not implemented for cgroup v2');
      return true;
    },
  );
});

test("levels: absolute parents from the root, relative ones below the daemon's cgroup", () => {
  assert.deepEqual(realtimeLevels('/engine', '/'), ['/engine']);
  assert.deepEqual(realtimeLevels('/a/b/', '/x'), ['/a', '/a/b']);
  assert.deepEqual(realtimeLevels('sub', '/daemon/cg'), ['/daemon', '/daemon/cg', '/daemon/cg/sub']);
});

test('mountinfo and /proc/self/cgroup parsing', () => {
  const mountinfo = [
    '25 24 0:22 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw',
    '30 24 0:27 / /sys/fs/cgroup/cpu,cpuacct rw,nosuid - cgroup cgroup rw,cpu,cpuacct',
    '31 24 0:28 / /sys/fs/cgroup/cpuset rw,nosuid - cgroup cgroup rw,cpuset',
  ].join('\n');
  assert.equal(findCpuMount(mountinfo), '/sys/fs/cgroup/cpu,cpuacct');
  assert.equal(findCpuMount('31 24 0:28 / /sys/fs/cgroup/cpuset rw - cgroup cgroup rw,cpuset'), undefined);
  assert.equal(ownCpuCgroup('4:memory:/m\n2:cpu,cpuacct:/svc/x\n0::/'), '/svc/x');
});

test('writes period then runtime at every level, top-down', () => {
  const mount = mkdtempSync(join(tmpdir(), 'cpu-rt-'));
  try {
    writeFileSync(join(mount, 'cpu.rt_runtime_us'), '950000');
    const dirs = applyCpuRealtime({
      period: 1000000,
      runtime: 20000,
      cgroupParent: '/a/b',
      layout: 'hybrid',
      cpuMount: mount,
      ownCgroup: '/',
    });
    assert.deepEqual(dirs, [join(mount, 'a'), join(mount, 'a/b')]);
    for (const d of dirs) {
      assert.equal(readFileSync(join(d, 'cpu.rt_period_us'), 'utf8'), '1000000');
      assert.equal(readFileSync(join(d, 'cpu.rt_runtime_us'), 'utf8'), '20000');
    }
  } finally {
    rmSync(mount, { recursive: true, force: true });
  }
});

test('a kernel without real-time group scheduling is refused clearly', () => {
  const mount = mkdtempSync(join(tmpdir(), 'cpu-rt-'));
  try {
    assert.throws(
      () => applyCpuRealtime({ runtime: 1000, cgroupParent: '/engine', layout: 'v1', cpuMount: mount, ownCgroup: '/' }),
      /not supported by the kernel/,
    );
  } finally {
    rmSync(mount, { recursive: true, force: true });
  }
});
