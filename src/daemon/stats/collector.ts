// Reads one sample of a running container: its cgroup (v1 or v2, located through its init
// process), its network namespace's interfaces, and the host's CPU time from /proc/stat that the
// docker CLI divides by.
import { totalmem } from 'node:os';
import { detectCgroupLayout, type CgroupLayout } from '../../oci/cgroups.ts';
import { cgroupDirsOf, parseMountinfo, readV1, readV2, type CgroupDirs, type CgroupMounts } from './cgroup-files.ts';
import { FdBudget, OpenFiles, parseNetDev, parseProcStat, readText, type ReadText } from './procfs.ts';
import type { Sample, U64 } from './wire.ts';

export interface SystemCpu {
  systemUsage: U64;
  onlineCpus: number;
}

export interface SampleTarget {
  pid: number;
  /** false for host networking and NetworkDisabled: dockerd reports no interfaces then. */
  networks: boolean;
}

/**
 * Per-container memo of where its cgroup is and its open files; re-resolved when the init pid
 * changes (a restart). Hand it to release() when the container is no longer followed.
 */
export interface DirCache {
  pid?: number | undefined;
  dirs?: CgroupDirs | undefined;
  files?: OpenFiles | undefined;
}

export interface CollectorOptions {
  layout?: CgroupLayout;
  /** Replaces every file read (tests); no descriptors are kept open then. */
  read?: ReadText;
  budget?: FdBudget;
  procRoot?: string;
  /** Memory limits above this are reported as this (dockerd caps "unlimited" at the host's RAM). */
  machineMemory?: number;
}

const hrBase = process.hrtime.bigint();
const wallBaseNs = BigInt(Date.now()) * 1_000_000n;
const wallNs = () => wallBaseNs + (process.hrtime.bigint() - hrBase);

export class CgroupCollector {
  private readonly version: 1 | 2;
  private readonly readOverride: ReadText | undefined;
  private readonly read: ReadText;
  private readonly budget: FdBudget;
  /** /proc/stat, read every batch. */
  private readonly own: OpenFiles;
  private readonly proc: string;
  private readonly machineMemory: number;
  private mountsCache: CgroupMounts | undefined;

  constructor(opts: CollectorOptions = {}) {
    this.version = (opts.layout ?? detectCgroupLayout()) === 'v2' ? 2 : 1;
    this.readOverride = opts.read;
    this.read = opts.read ?? readText;
    this.budget = opts.budget ?? FdBudget.forProcess();
    this.own = new OpenFiles(this.budget);
    this.proc = opts.procRoot ?? '/proc';
    this.machineMemory = opts.machineMemory ?? totalmem();
  }

  get cgroupVersion(): 1 | 2 {
    return this.version;
  }

  private mounts(): CgroupMounts {
    this.mountsCache ??= parseMountinfo(this.read(`${this.proc}/self/mountinfo`) ?? '');
    return this.mountsCache;
  }

  systemCpu(): SystemCpu | undefined {
    const text = (this.readOverride ?? this.own.read)(`${this.proc}/stat`);
    return text === undefined ? undefined : parseProcStat(text);
  }

  /** undefined when the process or its cgroup is gone. */
  sample(target: SampleTarget, sys: SystemCpu | undefined, cache: DirCache = {}): Sample | undefined {
    if (target.pid <= 0) return undefined;
    if (cache.pid !== target.pid || !cache.dirs) {
      this.release(cache);
      const procCgroup = this.read(`${this.proc}/${target.pid}/cgroup`);
      cache.pid = target.pid;
      cache.dirs = procCgroup === undefined ? undefined : cgroupDirsOf(procCgroup, this.version, this.mounts());
    }
    const where = cache.dirs;
    if (!where) return undefined;
    if (!this.readOverride) cache.files ??= new OpenFiles(this.budget);
    const read = cache.files?.read ?? this.read;
    const mono = performance.now();
    const readNs = wallNs();
    const reading = where.version === 1 ? readV1(read, where.dirs, this.machineMemory) : readV2(read, where.dir, this.machineMemory);
    if (!reading) {
      this.release(cache);
      return undefined;
    }
    if (sys) {
      reading.cpu.system_cpu_usage = sys.systemUsage;
      reading.cpu.online_cpus = sys.onlineCpus;
      // Keep dockerd's key order: throttling_data last.
      const { throttling_data, ...rest } = reading.cpu;
      reading.cpu = { ...rest, throttling_data };
    }
    const sample: Sample = { readNs, mono, ...reading };
    if (target.networks) {
      const dev = read(`${this.proc}/${target.pid}/net/dev`);
      const nets = dev === undefined ? undefined : parseNetDev(dev);
      if (nets) sample.networks = nets;
    }
    return sample;
  }

  /** Closes what `cache` holds open (the container stopped or is no longer followed). */
  release(cache: DirCache): void {
    cache.files?.close();
    cache.files = undefined;
    cache.dirs = undefined;
    cache.pid = undefined;
  }
}
