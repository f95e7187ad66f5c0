import assert from 'node:assert/strict';
import { test } from 'node:test';
import { cgroupDirsOf, parseBlkioFile, parseIoStat, parseMountinfo, readV1, readV2 } from './cgroup-files.ts';
import type { ReadText } from './procfs.ts';

const MOUNTINFO = `25 30 0:23 / /sys rw,nosuid - sysfs sysfs rw
31 25 0:27 / /sys/fs/cgroup ro,nosuid - tmpfs tmpfs ro,mode=755
32 31 0:28 / /sys/fs/cgroup/unified rw,nosuid - cgroup2 cgroup2 rw,nsdelegate
35 31 0:31 / /sys/fs/cgroup/cpu rw,nosuid - cgroup cgroup rw,cpu
36 31 0:32 / /sys/fs/cgroup/cpuacct rw,nosuid - cgroup cgroup rw,cpuacct
37 31 0:33 / /sys/fs/cgroup/memory rw,nosuid - cgroup cgroup rw,memory
38 31 0:34 /inner /sys/fs/cgroup/pids rw,nosuid - cgroup cgroup rw,pids
39 31 0:35 / /sys/fs/cgroup/blkio rw,nosuid - cgroup cgroup rw,blkio
40 31 0:36 / /sys/fs/cgroup/systemd rw,nosuid - cgroup cgroup rw,name=systemd
`;

test("parseMountinfo finds each v1 controller's hierarchy and the cgroup2 mount", () => {
  const m = parseMountinfo(MOUNTINFO);
  assert.deepEqual(m.v1.cpu, { mountPoint: '/sys/fs/cgroup/cpu', root: '/' });
  assert.deepEqual(m.v1.pids, { mountPoint: '/sys/fs/cgroup/pids', root: '/inner' });
  assert.deepEqual(m.v2, { mountPoint: '/sys/fs/cgroup/unified', root: '/' });
  const joined = parseMountinfo('35 31 0:31 / /sys/fs/cgroup/cpu,cpuacct rw - cgroup cgroup rw,cpu,cpuacct\n');
  assert.equal(joined.v1.cpu?.mountPoint, '/sys/fs/cgroup/cpu,cpuacct');
  assert.equal(joined.v1.cpuacct?.mountPoint, '/sys/fs/cgroup/cpu,cpuacct');
});

test('cgroupDirsOf maps /proc/<pid>/cgroup onto the mounts (v1 per controller, v2 the 0:: line)', () => {
  const procCgroup =
    '9:name=systemd:/engine/abc\n8:pids:/inner/engine/abc\n7:blkio:/engine/abc\n4:memory:/engine/abc\n2:cpuacct:/engine/abc\n1:cpu:/engine/abc\n0::/\n';
  const v1 = cgroupDirsOf(procCgroup, 1, parseMountinfo(MOUNTINFO));
  assert.deepEqual(v1, {
    version: 1,
    dirs: {
      pids: '/sys/fs/cgroup/pids/engine/abc',
      blkio: '/sys/fs/cgroup/blkio/engine/abc',
      memory: '/sys/fs/cgroup/memory/engine/abc',
      cpuacct: '/sys/fs/cgroup/cpuacct/engine/abc',
      cpu: '/sys/fs/cgroup/cpu/engine/abc',
    },
  });
  const v2 = cgroupDirsOf('0::/engine/abc\n', 2, parseMountinfo('30 1 0:26 / /sys/fs/cgroup rw - cgroup2 cgroup2 rw\n'));
  assert.deepEqual(v2, { version: 2, dir: '/sys/fs/cgroup/engine/abc' });
  assert.equal(cgroupDirsOf('', 2, parseMountinfo('')), undefined);
});

const fixture =
  (files: Record<string, string>): ReadText =>
  (p) =>
    files[p];

const V1_FILES = {
  '/c/cpuacct/cpuacct.usage': '5000000000\n',
  '/c/cpuacct/cpuacct.usage_percpu': '3000000000 2000000000 \n',
  '/c/cpuacct/cpuacct.stat': 'user 300\nsystem 150\n',
  '/c/cpu/cpu.stat': 'nr_periods 10\nnr_throttled 2\nthrottled_time 12345\n',
  '/c/memory/memory.usage_in_bytes': '10485760\n',
  '/c/memory/memory.max_usage_in_bytes': '20971520\n',
  '/c/memory/memory.limit_in_bytes': '9223372036854771712\n',
  '/c/memory/memory.failcnt': '0\n',
  '/c/memory/memory.stat':
    'cache 4096\nrss 8192\ninactive_file 1024\ntotal_inactive_file 2048\nhierarchical_memory_limit 9223372036854771712\nswap 0\n',
  '/c/pids/pids.current': '3\n',
  '/c/pids/pids.max': 'max\n',
  '/c/blkio/blkio.throttle.io_service_bytes_recursive':
    '8:0 Read 4096\n8:0 Write 8192\n8:0 Sync 0\n8:0 Async 12288\n8:0 Discard 0\n8:0 Total 12288\nTotal 12288\n',
  '/c/blkio/blkio.throttle.io_serviced_recursive': '8:0 Read 1\n8:0 Write 2\nTotal 3\n',
};
const V1_DIRS = { cpu: '/c/cpu', cpuacct: '/c/cpuacct', memory: '/c/memory', pids: '/c/pids', blkio: '/c/blkio' };

test("readV1: dockerd's conversions of the v1 files", () => {
  const r = readV1(fixture(V1_FILES), V1_DIRS, 8 * 1024 * 1024 * 1024)!;
  assert.deepEqual(r.cpu, {
    cpu_usage: {
      total_usage: 5_000_000_000,
      percpu_usage: [3_000_000_000, 2_000_000_000],
      usage_in_kernelmode: 1_500_000_000,
      usage_in_usermode: 3_000_000_000,
    },
    throttling_data: { periods: 10, throttled_periods: 2, throttled_time: 12345 },
  });
  // Unlimited reads as the host's memory; failcnt 0 is left out (omitempty).
  assert.deepEqual(Object.keys(r.memory), ['usage', 'max_usage', 'stats', 'limit']);
  assert.equal(r.memory.usage, 10485760);
  assert.equal(r.memory.max_usage, 20971520);
  assert.equal(r.memory.limit, 8 * 1024 * 1024 * 1024);
  assert.equal(r.memory.stats!.total_inactive_file, 2048);
  assert.equal(r.memory.stats!.hierarchical_memory_limit, 9223372036854771712n);
  assert.equal(r.memory.stats!.hierarchical_memsw_limit, 0);
  assert.equal(Object.keys(r.memory.stats!).length, 32);
  assert.ok(!('swap' in r.memory.stats!), 'only the keys dockerd reports');
  assert.deepEqual(r.pids, { current: 3 });
  assert.equal(r.blkio.io_service_bytes_recursive!.length, 6);
  assert.deepEqual(r.blkio.io_service_bytes_recursive![0], { major: 8, minor: 0, op: 'Read', value: 4096 });
  assert.deepEqual(r.blkio.io_serviced_recursive, [
    { major: 8, minor: 0, op: 'Read', value: 1 },
    { major: 8, minor: 0, op: 'Write', value: 2 },
  ]);
  assert.deepEqual(r.blkio.io_queue_recursive, []);
  assert.deepEqual(r.blkio.sectors_recursive, []);
});

test("readV1: a memory limit below the host's RAM and a pids limit show as set", () => {
  const r = readV1(
    fixture({
      ...V1_FILES,
      '/c/memory/memory.limit_in_bytes': '67108864\n',
      '/c/pids/pids.max': '100\n',
      '/c/memory/memory.failcnt': '7\n',
    }),
    V1_DIRS,
    8 * 2 ** 30,
  )!;
  assert.equal(r.memory.limit, 67108864);
  assert.equal(r.memory.failcnt, 7);
  assert.deepEqual(r.pids, { current: 3, limit: 100 });
});

test('readV1: CFQ recursive files win when the kernel has them', () => {
  const r = readV1(
    fixture({
      ...V1_FILES,
      '/c/blkio/blkio.io_serviced_recursive': '8:0 Read 5\nTotal 5\n',
      '/c/blkio/blkio.time_recursive': '8:0 77\n',
      '/c/blkio/blkio.sectors_recursive': '8:0 8\n',
    }),
    V1_DIRS,
    0,
  )!;
  assert.deepEqual(r.blkio.io_serviced_recursive, [{ major: 8, minor: 0, op: 'Read', value: 5 }]);
  assert.deepEqual(r.blkio.io_time_recursive, [{ major: 8, minor: 0, op: '', value: 77 }]);
  assert.deepEqual(r.blkio.io_service_bytes_recursive, [], 'the throttle files are not read then');
});

test('readV1: a vanished cgroup reads as undefined; a missing controller leaves its section empty', () => {
  assert.equal(readV1(fixture({}), V1_DIRS, 0), undefined);
  const r = readV1(fixture(V1_FILES), { cpuacct: '/c/cpuacct' }, 0)!;
  assert.deepEqual(r.memory, {});
  assert.deepEqual(r.pids, {});
  assert.equal(r.blkio.io_service_bytes_recursive, null);
});

test('parseBlkioFile skips the closing Total line only', () => {
  assert.deepEqual(parseBlkioFile('8:16 Total 3\nTotal 3\n'), [{ major: 8, minor: 16, op: 'Total', value: 3 }]);
  assert.deepEqual(parseBlkioFile('Total 0\n'), []);
});

const V2_FILES = {
  '/g/cpu.stat': 'usage_usec 2500000\nuser_usec 2000000\nsystem_usec 500000\nnr_periods 4\nnr_throttled 1\nthrottled_usec 300\n',
  '/g/memory.current': '1048576\n',
  '/g/memory.max': 'max\n',
  '/g/memory.stat': 'anon 4096\nfile 8192\ninactive_file 100\nworkingset_refault_anon 0\n',
  '/g/memory.events': 'low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n',
  '/g/pids.current': '2\n',
  '/g/pids.max': '50\n',
  '/g/io.stat': '8:0 rbytes=4096 wbytes=1024 rios=1 wios=2 dbytes=0 dios=0\n',
};

test('readV2: usec → ns, max → host memory, oom events as failcnt, io.stat as read/write entries', () => {
  const r = readV2(fixture(V2_FILES), '/g', 4 * 2 ** 30)!;
  assert.deepEqual(r.cpu, {
    cpu_usage: { total_usage: 2_500_000_000, usage_in_kernelmode: 500_000_000, usage_in_usermode: 2_000_000_000 },
    throttling_data: { periods: 4, throttled_periods: 1, throttled_time: 300_000 },
  });
  assert.deepEqual(Object.keys(r.memory), ['usage', 'stats', 'failcnt', 'limit']);
  assert.equal(r.memory.limit, 4 * 2 ** 30);
  assert.equal(r.memory.failcnt, 2);
  assert.equal(r.memory.stats!.inactive_file, 100);
  assert.equal(Object.keys(r.memory.stats!).length, 31);
  assert.deepEqual(r.pids, { current: 2, limit: 50 });
  assert.deepEqual(r.blkio.io_service_bytes_recursive, [
    { major: 8, minor: 0, op: 'read', value: 4096 },
    { major: 8, minor: 0, op: 'write', value: 1024 },
  ]);
  assert.equal(r.blkio.io_serviced_recursive, null);
});

test('readV2: no io entries is a nil list; a gone cgroup is undefined', () => {
  assert.equal(parseIoStat(''), null);
  const r = readV2(fixture({ ...V2_FILES, '/g/io.stat': '' }), '/g', 0)!;
  assert.equal(r.blkio.io_service_bytes_recursive, null);
  assert.equal(r.memory.limit, 18446744073709551615n, 'no cap without a known host size');
  assert.equal(readV2(fixture({}), '/g', 0), undefined);
});
