// A container's counters straight from its cgroup files, in the shapes dockerd derives from
// containerd's cgroups v1/v2 Metrics (same files, same conversions), without a gRPC round trip to
// containerd and its shim per container per second.
//
// Where the cgroup lives: /proc/<pid>/cgroup of the container's init gives the path per hierarchy
// (whatever the cgroup parent or driver was), /proc/self/mountinfo gives where each hierarchy is
// mounted.
import { join, posix } from 'node:path';
import { parseFlatKeyed, ticksToNs, type ReadText } from './procfs.ts';
import {
  nilBlkio,
  toBig,
  toU64,
  u64,
  type BlkioEntry,
  type BlkioStats,
  type CpuStats,
  type MemoryStats,
  type PidsStats,
  type U64,
} from './wire.ts';

export const V1_CONTROLLERS = ['cpu', 'cpuacct', 'memory', 'pids', 'blkio'] as const;
export type V1Controller = (typeof V1_CONTROLLERS)[number];

export interface CgroupMounts {
  /** v1 hierarchies: controller → { mount point, root of the mounted subtree }. */
  v1: Partial<Record<V1Controller, { mountPoint: string; root: string }>>;
  /** The cgroup2 mount (on a hybrid host: …/unified). */
  v2?: { mountPoint: string; root: string };
}

/** mountinfo escapes blanks and backslashes as \ooo. */
function unescapeMountField(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_m, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export function parseMountinfo(text: string): CgroupMounts {
  const mounts: CgroupMounts = { v1: {} };
  for (const line of text.split('\n')) {
    const dash = line.indexOf(' - ');
    if (dash < 0) continue;
    const pre = line.slice(0, dash).split(' ');
    const [fsType, , superOpts = ''] = line.slice(dash + 3).split(' ');
    const root = unescapeMountField(pre[3] ?? '/');
    const mountPoint = unescapeMountField(pre[4] ?? '');
    if (fsType === 'cgroup2') {
      mounts.v2 ??= { mountPoint, root };
    } else if (fsType === 'cgroup') {
      for (const opt of superOpts.split(',')) {
        const c = opt as V1Controller;
        if ((V1_CONTROLLERS as readonly string[]).includes(c)) mounts.v1[c] ??= { mountPoint, root };
      }
    }
  }
  return mounts;
}

export type CgroupDirs = { version: 1; dirs: Partial<Record<V1Controller, string>> } | { version: 2; dir: string };

function under(m: { mountPoint: string; root: string }, path: string): string {
  let rel = path;
  if (m.root !== '/' && (path === m.root || path.startsWith(m.root + '/'))) rel = path.slice(m.root.length) || '/';
  return join(m.mountPoint, posix.normalize(rel));
}

/** The cgroup directories of a process from its /proc/<pid>/cgroup text. */
export function cgroupDirsOf(procCgroup: string, version: 1 | 2, mounts: CgroupMounts): CgroupDirs | undefined {
  if (version === 2) {
    if (!mounts.v2) return undefined;
    for (const line of procCgroup.split('\n')) {
      if (line.startsWith('0::')) return { version: 2, dir: under(mounts.v2, line.slice(3)) };
    }
    return undefined;
  }
  const dirs: Partial<Record<V1Controller, string>> = {};
  for (const line of procCgroup.split('\n')) {
    const first = line.indexOf(':');
    const second = line.indexOf(':', first + 1);
    if (first < 0 || second < 0) continue;
    const path = line.slice(second + 1);
    for (const c of line.slice(first + 1, second).split(',')) {
      const m = mounts.v1[c as V1Controller];
      if (m) dirs[c as V1Controller] = under(m, path);
    }
  }
  return Object.keys(dirs).length ? { version: 1, dirs } : undefined;
}

export interface CgroupReading {
  pids: PidsStats;
  blkio: BlkioStats;
  cpu: CpuStats;
  memory: MemoryStats;
}

// The memory.stat keys dockerd reports, per cgroup version (absent in the file: 0).
const V1_MEMORY_KEYS = [
  'active_anon',
  'active_file',
  'cache',
  'dirty',
  'hierarchical_memory_limit',
  'hierarchical_memsw_limit',
  'inactive_anon',
  'inactive_file',
  'mapped_file',
  'pgfault',
  'pgmajfault',
  'pgpgin',
  'pgpgout',
  'rss',
  'rss_huge',
  'total_active_anon',
  'total_active_file',
  'total_cache',
  'total_dirty',
  'total_inactive_anon',
  'total_inactive_file',
  'total_mapped_file',
  'total_pgfault',
  'total_pgmajfault',
  'total_pgpgin',
  'total_pgpgout',
  'total_rss',
  'total_rss_huge',
  'total_unevictable',
  'total_writeback',
  'unevictable',
  'writeback',
];
const V2_MEMORY_KEYS = [
  'active_anon',
  'active_file',
  'anon',
  'anon_thp',
  'file',
  'file_dirty',
  'file_mapped',
  'file_writeback',
  'inactive_anon',
  'inactive_file',
  'kernel_stack',
  'pgactivate',
  'pgdeactivate',
  'pgfault',
  'pglazyfree',
  'pglazyfreed',
  'pgmajfault',
  'pgrefill',
  'pgscan',
  'pgsteal',
  'shmem',
  'slab',
  'slab_reclaimable',
  'slab_unreclaimable',
  'sock',
  'thp_collapse_alloc',
  'thp_fault_alloc',
  'unevictable',
  'workingset_activate',
  'workingset_nodereclaim',
  'workingset_refault',
];

function memoryStatMap(text: string | undefined, keys: string[]): Record<string, U64> {
  const raw = parseFlatKeyed(text);
  const out: Record<string, U64> = {};
  for (const k of keys) out[k] = u64(raw.get(k));
  return out;
}

const isZero = (v: U64 | undefined) => v === undefined || v === 0;

/** omitempty: leaves out zero members, keeping dockerd's key order. */
function omitZero<T extends Record<string, U64 | undefined>>(o: T): Partial<T> {
  const out: Partial<T> = {};
  for (const [k, v] of Object.entries(o)) if (!isZero(v)) (out as Record<string, U64>)[k] = v!;
  return out;
}

/** "max" (no limit) reads as 0 for pids, as containerd reports it. */
function pidsOf(read: ReadText, dir: string | undefined): PidsStats {
  if (!dir) return {};
  const current = read(`${dir}/pids.current`);
  if (current === undefined) return {};
  const max = read(`${dir}/pids.max`)?.trim();
  return omitZero({ current: u64(current), limit: max === 'max' ? 0 : u64(max) });
}

function capLimit(limit: U64, machineMemory: number): U64 {
  return machineMemory > 0 && toBig(limit) > BigInt(machineMemory) ? machineMemory : limit;
}

/** blkio.<name> lines "MAJ:MIN Op value" or "MAJ:MIN value"; the closing "Total n" line is skipped. */
export function parseBlkioFile(text: string | undefined): BlkioEntry[] {
  const out: BlkioEntry[] = [];
  if (!text) return out;
  for (const line of text.split('\n')) {
    const f = line.split(/[\s:]+/).filter(Boolean);
    if (f.length < 3) continue; // "Total 0", blank
    const op = f.length === 4 ? f[2]! : '';
    out.push({ major: u64(f[0]), minor: u64(f[1]), op, value: u64(f[f.length === 4 ? 3 : 2]) });
  }
  return out;
}

// CFQ's recursive files when the kernel has them, else the throttle policy's two (as containerd).
const CFQ_FILES: Array<[keyof BlkioStats, string]> = [
  ['sectors_recursive', 'blkio.sectors_recursive'],
  ['io_service_bytes_recursive', 'blkio.io_service_bytes_recursive'],
  ['io_serviced_recursive', 'blkio.io_serviced_recursive'],
  ['io_queue_recursive', 'blkio.io_queued_recursive'],
  ['io_service_time_recursive', 'blkio.io_service_time_recursive'],
  ['io_wait_time_recursive', 'blkio.io_wait_time_recursive'],
  ['io_merged_recursive', 'blkio.io_merged_recursive'],
  ['io_time_recursive', 'blkio.time_recursive'],
];
const THROTTLE_FILES: Array<[keyof BlkioStats, string]> = [
  ['io_serviced_recursive', 'blkio.throttle.io_serviced_recursive'],
  ['io_service_bytes_recursive', 'blkio.throttle.io_service_bytes_recursive'],
];

function blkioV1(read: ReadText, dir: string | undefined): BlkioStats {
  if (!dir) return nilBlkio();
  // dockerd copies every list, so on v1 all eight are arrays ([] when empty).
  const out: BlkioStats = {
    io_service_bytes_recursive: [],
    io_serviced_recursive: [],
    io_queue_recursive: [],
    io_service_time_recursive: [],
    io_wait_time_recursive: [],
    io_merged_recursive: [],
    io_time_recursive: [],
    sectors_recursive: [],
  };
  let size = 0;
  const cfqServiced = read(`${dir}/blkio.io_serviced_recursive`);
  if (cfqServiced !== undefined) {
    for (const [key, file] of CFQ_FILES) {
      out[key] = parseBlkioFile(file === 'blkio.io_serviced_recursive' ? cfqServiced : read(`${dir}/${file}`));
      size += out[key]!.length;
    }
  }
  if (size === 0) for (const [key, file] of THROTTLE_FILES) out[key] = parseBlkioFile(read(`${dir}/${file}`));
  return out;
}

/** undefined when the cgroup is gone (the container stopped between the state check and the read). */
export function readV1(read: ReadText, dirs: Partial<Record<V1Controller, string>>, machineMemory: number): CgroupReading | undefined {
  const usage = dirs.cpuacct ? read(`${dirs.cpuacct}/cpuacct.usage`) : '0';
  if (usage === undefined) return undefined;
  const cpu: CpuStats = {
    cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 },
    throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
  };
  if (dirs.cpuacct) {
    const percpu = read(`${dirs.cpuacct}/cpuacct.usage_percpu`);
    const times = parseFlatKeyed(read(`${dirs.cpuacct}/cpuacct.stat`));
    cpu.cpu_usage = {
      total_usage: u64(usage),
      ...(percpu !== undefined
        ? {
            percpu_usage: percpu
              .trim()
              .split(/\s+/)
              .filter(Boolean)
              .map((v) => u64(v)),
          }
        : {}),
      usage_in_kernelmode: ticksToNs(times.get('system')),
      usage_in_usermode: ticksToNs(times.get('user')),
    };
  }
  if (dirs.cpu) {
    const st = parseFlatKeyed(read(`${dirs.cpu}/cpu.stat`));
    cpu.throttling_data = {
      periods: u64(st.get('nr_periods')),
      throttled_periods: u64(st.get('nr_throttled')),
      throttled_time: u64(st.get('throttled_time')),
    };
  }

  let memory: MemoryStats = {};
  if (dirs.memory) {
    const m = dirs.memory;
    const stats = memoryStatMap(read(`${m}/memory.stat`), V1_MEMORY_KEYS);
    memory = omitZero({
      usage: u64(read(`${m}/memory.usage_in_bytes`)),
      max_usage: u64(read(`${m}/memory.max_usage_in_bytes`)),
    });
    memory.stats = stats;
    Object.assign(
      memory,
      omitZero({
        failcnt: u64(read(`${m}/memory.failcnt`)),
        limit: capLimit(u64(read(`${m}/memory.limit_in_bytes`)), machineMemory),
      }),
    );
  }
  return { pids: pidsOf(read, dirs.pids), blkio: blkioV1(read, dirs.blkio), cpu, memory };
}

const USEC = 1000n;
const usecToNs = (v: string | undefined): U64 => toU64(toBig(u64(v)) * USEC);

/** io.stat: "MAJ:MIN rbytes=… wbytes=… rios=…" → read/write byte entries (null when there are none, a nil slice). */
export function parseIoStat(text: string | undefined): BlkioEntry[] | null {
  let out: BlkioEntry[] | null = null;
  if (!text) return out;
  for (const line of text.split('\n')) {
    const [dev, ...kvs] = line.trim().split(/\s+/);
    const m = /^(\d+):(\d+)$/.exec(dev ?? '');
    if (!m) continue;
    const kv = new Map(kvs.map((p) => p.split('=') as [string, string]));
    out ??= [];
    out.push({ major: u64(m[1]), minor: u64(m[2]), op: 'read', value: u64(kv.get('rbytes')) });
    out.push({ major: u64(m[1]), minor: u64(m[2]), op: 'write', value: u64(kv.get('wbytes')) });
  }
  return out;
}

export function readV2(read: ReadText, dir: string, machineMemory: number): CgroupReading | undefined {
  const cpuStat = read(`${dir}/cpu.stat`);
  if (cpuStat === undefined) return undefined;
  const st = parseFlatKeyed(cpuStat);
  const cpu: CpuStats = {
    cpu_usage: {
      total_usage: usecToNs(st.get('usage_usec')),
      usage_in_kernelmode: usecToNs(st.get('system_usec')),
      usage_in_usermode: usecToNs(st.get('user_usec')),
    },
    throttling_data: {
      periods: u64(st.get('nr_periods')),
      throttled_periods: u64(st.get('nr_throttled')),
      throttled_time: usecToNs(st.get('throttled_usec')),
    },
  };

  let memory: MemoryStats = {};
  const current = read(`${dir}/memory.current`);
  if (current !== undefined) {
    const max = read(`${dir}/memory.max`)?.trim();
    const limit: U64 = max === undefined ? 0 : max === 'max' ? 18446744073709551615n : u64(max);
    const events = parseFlatKeyed(read(`${dir}/memory.events`));
    memory = omitZero({ usage: u64(current) });
    memory.stats = memoryStatMap(read(`${dir}/memory.stat`), V2_MEMORY_KEYS);
    Object.assign(memory, omitZero({ failcnt: u64(events.get('oom')), limit: capLimit(limit, machineMemory) }));
  }

  const blkio = nilBlkio();
  blkio.io_service_bytes_recursive = parseIoStat(read(`${dir}/io.stat`));
  return { pids: pidsOf(read, dir), blkio, cpu, memory };
}
