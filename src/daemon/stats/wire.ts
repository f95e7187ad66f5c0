// The stats wire shape (ContainerStatsResponse) as dockerd's Go encoder writes it: field order,
// omitempty fields left out, nil slices as null, map keys sorted, uint64 counters exact (values past
// 2^53 — unlimited memory limits, system CPU time on big hosts — are kept as bigint and written as
// raw JSON digits).
import { formatTimeNano, ZERO_TIME } from '../../util/time.ts';
import type { ContainerStatsResponse } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';

/** A uint64 counter: a number while it is exact, a bigint beyond that. */
export type U64 = number | bigint;

/** `T` with every number a U64 (what encodeStats writes exactly). */
type Exact<T> = T extends number
  ? U64
  : T extends readonly (infer E)[]
    ? Exact<E>[]
    : T extends object
      ? { [K in keyof T]: Exact<T[K]> }
      : T;

/** One frame of GET /containers/{id}/stats: the API's ContainerStatsResponse as Go writes it, counters exact. */
export type StatsFrame = Exact<GoJson<ContainerStatsResponse>>;

export interface BlkioEntry {
  major: U64;
  minor: U64;
  op: string;
  value: U64;
}

/** null = a nil slice in Go (cgroup v2 leaves all but io_service_bytes_recursive nil). */
export interface BlkioStats {
  io_service_bytes_recursive: BlkioEntry[] | null;
  io_serviced_recursive: BlkioEntry[] | null;
  io_queue_recursive: BlkioEntry[] | null;
  io_service_time_recursive: BlkioEntry[] | null;
  io_wait_time_recursive: BlkioEntry[] | null;
  io_merged_recursive: BlkioEntry[] | null;
  io_time_recursive: BlkioEntry[] | null;
  sectors_recursive: BlkioEntry[] | null;
}

export interface CpuStats {
  cpu_usage: { total_usage: U64; percpu_usage?: U64[]; usage_in_kernelmode: U64; usage_in_usermode: U64 };
  system_cpu_usage?: U64;
  online_cpus?: number;
  throttling_data: { periods: U64; throttled_periods: U64; throttled_time: U64 };
}

export interface MemoryStats {
  usage?: U64;
  max_usage?: U64;
  stats?: Record<string, U64>;
  failcnt?: U64;
  limit?: U64;
}

export interface PidsStats {
  current?: U64;
  limit?: U64;
}

export interface NetworkStats {
  rx_bytes: U64;
  rx_packets: U64;
  rx_errors: U64;
  rx_dropped: U64;
  tx_bytes: U64;
  tx_packets: U64;
  tx_errors: U64;
  tx_dropped: U64;
}

/** One reading of a running container's counters (what the sampler keeps per container). */
export interface Sample {
  /** Wall-clock time of the reading, nanoseconds since the epoch. */
  readNs: bigint;
  /** Monotonic milliseconds, for the spacing between a sample and its predecessor. */
  mono: number;
  pids: PidsStats;
  blkio: BlkioStats;
  cpu: CpuStats;
  memory: MemoryStats;
  /** Interfaces other than lo; undefined (the key left out) when there are none. */
  networks?: Record<string, NetworkStats>;
}

export { ZERO_TIME };

export function nilBlkio(): BlkioStats {
  return {
    io_service_bytes_recursive: null,
    io_serviced_recursive: null,
    io_queue_recursive: null,
    io_service_time_recursive: null,
    io_wait_time_recursive: null,
    io_merged_recursive: null,
    io_time_recursive: null,
    sectors_recursive: null,
  };
}

/** Go's zero CPUStats: the omitempty fields absent, the rest zeros. */
export function zeroCpu(): CpuStats {
  return {
    cpu_usage: { total_usage: 0, usage_in_kernelmode: 0, usage_in_usermode: 0 },
    throttling_data: { periods: 0, throttled_periods: 0, throttled_time: 0 },
  };
}

export interface Identity {
  /** With the leading slash, as dockerd writes it. */
  name: string;
  id: string;
}

/** The object for one frame, keys in dockerd's order. `prev` fills preread/precpu_stats. */
export function statsFrame(who: Identity, s: Sample, prev: Sample | undefined): StatsFrame {
  const frame: StatsFrame = {
    read: formatTimeNano(s.readNs),
    preread: prev ? formatTimeNano(prev.readNs) : ZERO_TIME,
    pids_stats: s.pids,
    blkio_stats: s.blkio,
    num_procs: 0,
    storage_stats: {},
    cpu_stats: s.cpu,
    precpu_stats: prev ? prev.cpu : zeroCpu(),
    memory_stats: s.memory,
    name: who.name,
    id: who.id,
  };
  if (s.networks) frame.networks = s.networks;
  return frame;
}

/** What dockerd sends for a container that is not running: Go zero values plus name and id. */
export function emptyFrame(who: Identity): StatsFrame {
  return {
    read: ZERO_TIME,
    preread: ZERO_TIME,
    pids_stats: {},
    blkio_stats: nilBlkio(),
    num_procs: 0,
    storage_stats: {},
    cpu_stats: zeroCpu(),
    precpu_stats: zeroCpu(),
    memory_stats: {},
    name: who.name,
    id: who.id,
  };
}

type RawJson = (text: string) => unknown;
const rawJSON = (JSON as unknown as { rawJSON: RawJson }).rawJSON;

/** JSON text with bigints written as exact digits (JSON.stringify refuses bigint by default). */
export function encodeStats(value: unknown): string {
  return JSON.stringify(value, (_k, v: unknown) => (typeof v === 'bigint' ? rawJSON(v.toString()) : v));
}

/** Parses a decimal counter into a U64 (number while exact). Garbage gives 0, as strconv errors are skipped. */
export function u64(text: string | undefined): U64 {
  if (!text) return 0;
  const t = text.trim();
  if (t.length < 16) {
    const n = Number(t); // cgroup files hold plain decimals; anything else ("max", "") reads 0
    return Number.isSafeInteger(n) && n >= 0 ? n : 0;
  }
  if (!/^\d+$/.test(t)) return 0;
  const b = BigInt(t);
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

export function toU64(b: bigint): U64 {
  return b <= BigInt(Number.MAX_SAFE_INTEGER) ? Number(b) : b;
}

export function toBig(v: U64): bigint {
  return typeof v === 'bigint' ? v : BigInt(v);
}
