// The host's cgroup layout and the cgroup driver choice.
//
// Layouts: "v2" (cgroup2 at /sys/fs/cgroup), "v1" (controllers under /sys/fs/cgroup/<controller>) and
// "hybrid" (v1 controllers plus a cgroup2 tree at /sys/fs/cgroup/unified). Hybrid counts as v1 for
// resources: the controllers containers are limited by live in the v1 hierarchies.

import { accessSync, constants, readFileSync, statfsSync, statSync } from 'node:fs';
import { invalidParameter } from '../errors.ts';

export type CgroupLayout = 'v1' | 'v2' | 'hybrid';
export type CgroupDriver = 'cgroupfs' | 'systemd';

const CGROUP2_SUPER_MAGIC = 0x63677270;
const TMPFS_MAGIC = 0x01021994;

function fsType(path: string): number | undefined {
  try {
    return Number(statfsSync(path).type);
  } catch {
    // ENOENT: no such mount point
    return undefined;
  }
}

/** Detects the layout from the filesystem types mounted at /sys/fs/cgroup (and …/unified). */
export function detectCgroupLayout(root = '/sys/fs/cgroup'): CgroupLayout {
  const t = fsType(root);
  if (t === CGROUP2_SUPER_MAGIC) return 'v2';
  if (t === TMPFS_MAGIC && fsType(`${root}/unified`) === CGROUP2_SUPER_MAGIC) return 'hybrid';
  return 'v1';
}

/** The cgroup version that governs container resources (hybrid → 1). */
export function cgroupVersion(layout: CgroupLayout = detectCgroupLayout()): 1 | 2 {
  return layout === 'v2' ? 2 : 1;
}

/** systemd is PID 1 (the sd_booted test: /run/systemd/system is a directory). */
export function isSystemdRunning(runDir = '/run/systemd/system'): boolean {
  try {
    return statSync(runDir).isDirectory();
  } catch {
    // ENOENT: systemd is not running
    return false;
  }
}

/** The driver when native.cgroupdriver is not given: systemd only on cgroup v2 hosts run by systemd. */
export function cgroupDriverDefault(layout: CgroupLayout = detectCgroupLayout(), systemd = isSystemdRunning()): CgroupDriver {
  return layout === 'v2' && systemd ? 'systemd' : 'cgroupfs';
}

/**
 * The driver for a daemon from its exec-opts (`native.cgroupdriver=<driver>`; key case-insensitive,
 * last one wins). Throws for unknown drivers and for systemd without a running systemd.
 */
export function resolveCgroupDriver(
  execOpts: readonly string[] = [],
  host: { layout?: CgroupLayout; systemd?: boolean } = {},
): CgroupDriver {
  let requested = '';
  for (const opt of execOpts) {
    const eq = opt.indexOf('=');
    if (eq < 0) continue;
    if (opt.slice(0, eq).trim().toLowerCase() === 'native.cgroupdriver') requested = opt.slice(eq + 1).trim();
  }
  const systemd = host.systemd ?? isSystemdRunning();
  if (requested === '') return cgroupDriverDefault(host.layout ?? detectCgroupLayout(), systemd);
  if (requested === 'none') throw invalidParameter('native.cgroupdriver option none is internally used and cannot be specified manually');
  if (requested !== 'cgroupfs' && requested !== 'systemd') throw invalidParameter(`native.cgroupdriver option ${requested} not supported`);
  if (requested === 'systemd' && !systemd) {
    throw invalidParameter(
      'systemd cgroup driver requested but systemd is not running (native.cgroupdriver=systemd needs systemd as PID 1)',
    );
  }
  return requested;
}

/** Default --cgroup-parent for a driver. */
export function defaultCgroupParent(driver: CgroupDriver): string {
  return driver === 'systemd' ? 'system.slice' : '/engine';
}

/**
 * linux.cgroupsPath. cgroupfs: `<parent>/<id>` (a parent without leading "/" is left relative: the
 * caller resolves it against the daemon's own cgroup). systemd: `<slice>:engine:<id>`.
 */
export function cgroupsPath(driver: CgroupDriver, parent: string | undefined, id: string): string {
  if (driver === 'systemd') {
    const slice = parent || 'system.slice';
    if (slice.length <= 6 || !slice.endsWith('.slice')) {
      throw invalidParameter('cgroup-parent for systemd cgroup should be a valid slice named as "xxx.slice"');
    }
    return `${slice}:engine:${id}`;
  }
  const p = (parent || '/engine').replace(/\/+$/, '');
  return `${p}/${id}`;
}

/**
 * Whether this (rootless) daemon may manage cgroups: only on cgroup v2 with its own cgroup writable
 * (delegated to the user); v1 hierarchies are never delegated to an unprivileged user.
 */
export function cgroupsDelegated(layout: CgroupLayout = detectCgroupLayout()): boolean {
  if (layout !== 'v2') return false;
  try {
    const own = readFileSync('/proc/self/cgroup', 'utf8')
      .split('\n')
      .find((l) => l.startsWith('0::'))
      ?.slice(3);
    if (!own) return false;
    accessSync(`/sys/fs/cgroup${own}/cgroup.subtree_control`, constants.W_OK);
    return true;
  } catch {
    return false; // not writable: not delegated
  }
}

const LIMIT_FIELDS = [
  'CpuShares',
  'Memory',
  'BlkioWeight',
  'CpuPeriod',
  'CpuQuota',
  'CpuRealtimePeriod',
  'CpuRealtimeRuntime',
  'KernelMemoryTCP',
  'MemoryReservation',
  'NanoCpus',
  'PidsLimit',
] as const;
const LIMIT_LISTS = [
  'BlkioWeightDevice',
  'BlkioDeviceReadBps',
  'BlkioDeviceWriteBps',
  'BlkioDeviceReadIOps',
  'BlkioDeviceWriteIOps',
  'DeviceCgroupRules',
] as const;

/** The cgroup settings a HostConfig asks for (what a daemon without cgroups must refuse). */
export function requestedLimits(hc: Record<string, unknown>): string[] {
  const out: string[] = LIMIT_FIELDS.filter((k) => typeof hc[k] === 'number' && (hc[k] as number) > 0);
  if (typeof hc.MemorySwap === 'number' && hc.MemorySwap > 0) out.push('MemorySwap');
  if (typeof hc.MemorySwappiness === 'number' && hc.MemorySwappiness >= 0) out.push('MemorySwappiness');
  for (const k of ['CpusetCpus', 'CpusetMems', 'CgroupParent'] as const) if (typeof hc[k] === 'string' && hc[k] !== '') out.push(k);
  for (const k of LIMIT_LISTS) if (Array.isArray(hc[k]) && (hc[k] as unknown[]).length > 0) out.push(k);
  if (hc.OomKillDisable === true) out.push('OomKillDisable');
  return out;
}

/** Rootless without delegated cgroups: a request for limits is a clear 400, never silently dropped. */
export function refuseLimitsWithoutCgroups(hc: Record<string, unknown>): void {
  const asked = requestedLimits(hc);
  if (asked.length === 0) return;
  throw invalidParameter(
    `resource limits need cgroups, which are not delegated to this rootless daemon (cgroup v2 with a delegated cgroup is required; this host has cgroup v1): refused ${asked.join(', ')}`,
  );
}
