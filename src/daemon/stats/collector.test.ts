// The collector on this host's real files, with the test process standing in for a container.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { test } from 'node:test';
import { detectCgroupLayout } from '../../oci/cgroups.ts';
import { CgroupCollector, type DirCache } from './collector.ts';
import { parseMountinfo } from './cgroup-files.ts';
import { FdBudget, readText } from './procfs.ts';

const layout = detectCgroupLayout();
const hasV2Mount = parseMountinfo(readText('/proc/self/mountinfo') ?? '').v2 !== undefined;

function spin(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end);
}

test('system CPU from /proc/stat: nanoseconds and the online CPU count', () => {
  const sys = new CgroupCollector().systemCpu()!;
  assert.ok(Number(sys.systemUsage) > 0);
  assert.ok(sys.onlineCpus >= 1);
});

test('v1 hierarchies: CPU usage of a cgroup grows while its process works', { skip: layout === 'v2' ? 'cgroup v2 host' : false }, () => {
  const c = new CgroupCollector({ layout });
  const cache: DirCache = {};
  const a = c.sample({ pid: process.pid, networks: true }, c.systemCpu(), cache)!;
  assert.ok(a, 'a reading of our own cgroup');
  assert.equal(cache.dirs?.version, 1);
  spin(60);
  const b = c.sample({ pid: process.pid, networks: true }, c.systemCpu(), cache)!;
  assert.ok(Number(b.cpu.cpu_usage.total_usage) > Number(a.cpu.cpu_usage.total_usage));
  assert.ok(Array.isArray(b.cpu.cpu_usage.percpu_usage));
  assert.ok(Number(b.cpu.system_cpu_usage) >= Number(a.cpu.system_cpu_usage));
  assert.deepEqual(Object.keys(b.cpu), ['cpu_usage', 'system_cpu_usage', 'online_cpus', 'throttling_data']);
  assert.ok(b.readNs > a.readNs && b.mono > a.mono);
  assert.ok(!b.networks || !('lo' in b.networks), 'lo is never listed');
  assert.ok((cache.files?.size ?? 0) > 3, 'files stay open between readings');
  c.release(cache);
  assert.equal(cache.files, undefined);
  assert.equal(cache.dirs, undefined);
});

test('open descriptors come back to the budget on release', { skip: layout === 'v2' ? 'cgroup v2 host' : false }, () => {
  const budget = new FdBudget(100);
  const c = new CgroupCollector({ layout, budget });
  const cache: DirCache = {};
  assert.ok(c.sample({ pid: process.pid, networks: true }, undefined, cache));
  assert.ok(budget.left < 100);
  c.release(cache);
  assert.equal(budget.left, 100);
});

test('cgroup2 files: usage_usec read as nanoseconds', { skip: !hasV2Mount ? 'no cgroup2 mount' : false }, () => {
  const c = new CgroupCollector({ layout: 'v2' });
  const cache: DirCache = {};
  const s = c.sample({ pid: process.pid, networks: false }, undefined, cache)!;
  assert.ok(s, 'a reading of our own cgroup2 directory');
  assert.equal(cache.dirs?.version, 2);
  assert.ok(Number(s.cpu.cpu_usage.total_usage) > 0);
  assert.equal(Number(s.cpu.cpu_usage.total_usage) % 1000, 0, 'microseconds × 1000');
  assert.equal(s.cpu.cpu_usage.percpu_usage, undefined, 'no per-CPU figures on v2');
  assert.equal(s.blkio.io_serviced_recursive, null);
  assert.equal(s.networks, undefined);
});

test('a process that is gone gives no reading; the cache follows a new pid', () => {
  const c = new CgroupCollector({ layout });
  const cache: DirCache = {};
  assert.equal(c.sample({ pid: 0, networks: false }, undefined, cache), undefined);
  assert.equal(c.sample({ pid: 2 ** 22 + 12345, networks: false }, undefined, cache), undefined);
  if (existsSync(`/proc/${process.pid}/cgroup`)) {
    assert.ok(c.sample({ pid: process.pid, networks: false }, undefined, cache));
    assert.equal(cache.pid, process.pid);
  }
});
