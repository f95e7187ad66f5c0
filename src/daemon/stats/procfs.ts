// Small synchronous file reads for the sampler (cgroup and /proc files are tiny and never block on
// I/O; one shared buffer, no promise or thread-pool hop per file), and the /proc parsers:
// /proc/stat for system CPU time, /proc/<pid>/net/dev for the container's interfaces.
//
// Files of a followed container stay open between readings: a read at offset 0 makes the kernel
// generate a cgroup or /proc file afresh (seq_file), and skipping the path walk of open() makes a
// reading several times cheaper. A budget bounds how many descriptors the sampler may hold.
import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { toU64, u64, type NetworkStats, type U64 } from './wire.ts';

export type ReadText = (path: string) => string | undefined;

let buf = Buffer.allocUnsafe(64 * 1024);

/** The file from offset 0 to its end (throws on read errors: ENODEV once a cgroup is removed). */
function readFrom0(fd: number): string {
  let len = 0;
  for (;;) {
    if (len === buf.length) {
      const bigger = Buffer.allocUnsafe(buf.length * 2);
      buf.copy(bigger, 0, 0, len);
      buf = bigger;
    }
    const n = readSync(fd, buf, len, buf.length - len, len);
    if (n === 0) break;
    len += n;
  }
  return buf.toString('utf8', 0, len);
}

/** The whole file as text, or undefined when it cannot be opened or read (gone, no such controller). */
export const readText: ReadText = (path) => {
  let fd: number;
  try {
    fd = openSync(path, 'r');
  } catch {
    // ENOENT: the process exited (or a file this kernel lacks)
    return undefined;
  }
  try {
    return readFrom0(fd);
  } catch {
    // ESRCH: the process exited while being read
    return undefined;
  } finally {
    closeSync(fd);
  }
};

/** How many descriptors the sampler may keep open, shared by all OpenFiles. */
export class FdBudget {
  constructor(public left: number) {}

  /** A quarter of the soft RLIMIT_NOFILE, at most 8192 (1024 when the limit is unknown). */
  static forProcess(): FdBudget {
    try {
      const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
      const soft = m && m[1] !== 'unlimited' ? Number(m[1]) : 32768;
      return new FdBudget(Math.min(8192, Math.floor(soft / 4)));
    } catch {
      // no /proc/self/limits: a conservative budget
      return new FdBudget(1024);
    }
  }
}

/**
 * The files of one container, opened on first use and re-read from offset 0 afterwards. Files that
 * do not exist are remembered as such (controllers and files do not appear in a live cgroup).
 * Past the budget, files are opened and closed per reading.
 */
export class OpenFiles {
  private readonly fds = new Map<string, number>();
  private readonly missing = new Set<string>();

  constructor(private readonly budget: FdBudget) {}

  readonly read: ReadText = (path) => {
    let fd = this.fds.get(path);
    if (fd === undefined) {
      if (this.missing.has(path)) return undefined;
      if (this.budget.left <= 0) {
        const text = readText(path);
        if (text === undefined) this.missing.add(path);
        return text;
      }
      try {
        fd = openSync(path, 'r');
      } catch {
        this.missing.add(path);
        return undefined;
      }
      this.fds.set(path, fd);
      this.budget.left--;
    }
    try {
      return readFrom0(fd);
    } catch {
      this.drop(path, fd);
      return undefined;
    }
  };

  get size(): number {
    return this.fds.size;
  }

  close(): void {
    for (const [path, fd] of this.fds) this.drop(path, fd);
    this.missing.clear();
  }

  private drop(path: string, fd: number): void {
    this.fds.delete(path);
    this.budget.left++;
    try {
      closeSync(fd);
    } catch {
      // EBADF: already closed
    }
  }
}

/** USER_HZ: /proc/stat and cpuacct.stat count in ticks of 1/100 s on Linux. */
const NS_PER_TICK = 10_000_000n;

/**
 * System CPU time in nanoseconds (the first seven fields of the aggregate "cpu" line, as dockerd
 * sums them) and the number of cpuN lines (online CPUs).
 */
export function parseProcStat(text: string): { systemUsage: U64; onlineCpus: number } | undefined {
  let total: bigint | undefined;
  let online = 0;
  for (const line of text.split('\n')) {
    if (!line.startsWith('cpu')) break; // the cpu lines come first
    if (line[3] === ' ') {
      const f = line.split(/\s+/);
      if (f.length < 8) return undefined;
      total = 0n;
      for (let i = 1; i < 8; i++) total += BigInt(f[i]!);
    } else if (line[3]! >= '0' && line[3]! <= '9') {
      online++;
    }
  }
  return total === undefined ? undefined : { systemUsage: toU64(total * NS_PER_TICK), onlineCpus: online };
}

export function ticksToNs(ticks: string | undefined): U64 {
  const t = u64(ticks);
  return toU64(BigInt(t) * NS_PER_TICK);
}

/**
 * Devices every new network namespace gets when the matching tunnel module is loaded on the host;
 * dockerd lists only the interfaces it put there, so these stay out as lo does.
 */
const FALLBACK_DEVICES = new Set(['lo', 'tunl0', 'gre0', 'gretap0', 'erspan0', 'ip_vti0', 'ip6_vti0', 'sit0', 'ip6tnl0', 'ip6gre0']);

/** Interfaces of /proc/<pid>/net/dev (the namespace of that process), keys sorted; undefined when none. */
export function parseNetDev(text: string): Record<string, NetworkStats> | undefined {
  const found: Array<[string, NetworkStats]> = [];
  for (const line of text.split('\n')) {
    const colon = line.indexOf(':');
    if (colon < 0) continue;
    const name = line.slice(0, colon).trim();
    if (!name || name.includes('|') || FALLBACK_DEVICES.has(name)) continue;
    const f = line
      .slice(colon + 1)
      .trim()
      .split(/\s+/);
    if (f.length < 16) continue;
    found.push([
      name,
      {
        rx_bytes: u64(f[0]),
        rx_packets: u64(f[1]),
        rx_errors: u64(f[2]),
        rx_dropped: u64(f[3]),
        tx_bytes: u64(f[8]),
        tx_packets: u64(f[9]),
        tx_errors: u64(f[10]),
        tx_dropped: u64(f[11]),
      },
    ]);
  }
  if (found.length === 0) return undefined;
  found.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return Object.fromEntries(found);
}

/** "key value" lines (memory.stat, cpu.stat, cpuacct.stat) into a map of raw strings. */
export function parseFlatKeyed(text: string | undefined): Map<string, string> {
  const out = new Map<string, string>();
  if (!text) return out;
  for (const line of text.split('\n')) {
    const sp = line.indexOf(' ');
    if (sp > 0) out.set(line.slice(0, sp), line.slice(sp + 1).trim());
  }
  return out;
}
