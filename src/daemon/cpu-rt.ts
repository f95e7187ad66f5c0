// --cpu-rt-period / --cpu-rt-runtime: the real-time CPU budget of the cgroup all containers live
// under. cgroup v1 only (v2 has no real-time group scheduling knobs): at start-up every level of the
// parent path is created and given the values, top-down, because a child's real-time runtime can
// never exceed its parent's.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { invalidParameter } from '../errors.ts';
import type { CgroupLayout } from '../oci/cgroups.ts';

export interface CpuRealtimeSettings {
  period?: number | undefined;
  runtime?: number | undefined;
  /** The containers' parent cgroup: absolute (from the root) or relative to the daemon's own. */
  cgroupParent: string;
  layout: CgroupLayout;
  /** For tests: where the v1 cpu hierarchy is mounted and the daemon's path inside it. */
  cpuMount?: string;
  ownCgroup?: string;
}

/** Mount point of the v1 hierarchy that holds the cpu controller, from /proc/self/mountinfo. */
export function findCpuMount(mountinfo: string = readFileSync('/proc/self/mountinfo', 'utf8')): string | undefined {
  for (const line of mountinfo.split('\n')) {
    const [pre, post] = line.split(' - ');
    if (!pre || !post) continue;
    const [fstype, , superOpts = ''] = post.split(' ');
    if (fstype !== 'cgroup') continue;
    if (superOpts.split(',').includes('cpu')) return pre.split(' ')[4];
  }
  return undefined;
}

/** The daemon's own cgroup in the v1 cpu hierarchy, from /proc/self/cgroup. */
export function ownCpuCgroup(procCgroup: string = readFileSync('/proc/self/cgroup', 'utf8')): string {
  for (const line of procCgroup.split('\n')) {
    const [, controllers = '', path = '/'] = line.split(':');
    if (controllers.split(',').includes('cpu')) return path;
  }
  return '/';
}

/**
 * The cgroup paths (relative to the cpu mount) to configure, outermost first: each level of the
 * parent below the root. A relative parent hangs below the daemon's own cgroup.
 */
export function realtimeLevels(cgroupParent: string, ownCgroup: string): string[] {
  const full = cgroupParent.startsWith('/') ? cgroupParent : `${ownCgroup.replace(/\/+$/, '')}/${cgroupParent}`;
  const parts = full.split('/').filter((p) => p !== '' && p !== '.');
  return parts.map((_, i) => `/${parts.slice(0, i + 1).join('/')}`);
}

/**
 * Applies the settings, or refuses them (invalidParameter, the daemon does not start) where they
 * cannot work. Nothing happens when neither is set. Returns the cgroup directories written.
 */
export function applyCpuRealtime(s: CpuRealtimeSettings): string[] {
  const period = s.period ?? 0;
  const runtime = s.runtime ?? 0;
  if (period === 0 && runtime === 0) return [];
  if (s.layout === 'v2') throw invalidParameter('daemon-scoped cpu-rt-period and cpu-rt-runtime are not implemented for cgroup v2');
  const mount = s.cpuMount ?? findCpuMount();
  if (!mount) throw invalidParameter('cpu-rt-period/cpu-rt-runtime: no cgroup v1 hierarchy with the cpu controller is mounted');
  if (!existsSync(join(mount, 'cpu.rt_runtime_us'))) {
    throw invalidParameter(
      'daemon-scoped cpu-rt-period and cpu-rt-runtime are not supported by the kernel (no cpu.rt_runtime_us: real-time group scheduling is not built in)',
    );
  }
  const written: string[] = [];
  for (const level of realtimeLevels(s.cgroupParent, s.ownCgroup ?? ownCpuCgroup())) {
    const dir = join(mount, level);
    mkdirSync(dir, { recursive: true, mode: 0o755 });
    for (const [file, value] of [
      ['cpu.rt_period_us', period],
      ['cpu.rt_runtime_us', runtime],
    ] as const) {
      if (value === 0) continue;
      try {
        writeFileSync(join(dir, file), String(value));
      } catch (err) {
        const code = (err as NodeJS.ErrnoException).code ?? '';
        throw invalidParameter(
          `cannot set ${file}=${value} on cgroup ${level}: ${code || (err as Error).message}` +
            (code === 'EINVAL' || code === 'EBUSY' ? " (the runtime must fit the period and the parent cgroup's real-time budget)" : ''),
        );
      }
    }
    written.push(dir);
  }
  return written;
}
