// Facts about the host that /info and /version report. Read once; they do not change while we run.
import { existsSync, readFileSync } from 'node:fs';
import os from 'node:os';
import { cgroupVersion } from '../oci/cgroups.ts';

export interface HostInfo {
  kernelVersion: string;
  operatingSystem: string;
  osVersion: string;
  architecture: string; // uname -m, as /info reports it
  goArch: string; //       amd64/arm64, as /version reports it
  ncpu: number;
  memTotal: number;
  hostname: string;
  cgroupVersion: '1' | '2';
  /** cgroup v1 kernel-memory accounting (dockerd's sysinfo: the memory controller's kmem files). */
  kernelMemory: boolean;
  kernelMemoryTCP: boolean;
}

function osRelease(): Record<string, string> {
  try {
    const out: Record<string, string> = {};
    for (const line of readFileSync('/etc/os-release', 'utf8').split('\n')) {
      const m = /^([A-Z_]+)=(.*)$/.exec(line);
      if (m) out[m[1]!] = m[2]!.replace(/^"(.*)"$/, '$1');
    }
    return out;
  } catch {
    return {};
  }
}

const MEMORY_CGROUP_V1 = '/sys/fs/cgroup/memory';

let cached: HostInfo | undefined;

export function hostInfo(): HostInfo {
  if (cached) return cached;
  const rel = osRelease();
  const machine = os.machine();
  cached = {
    kernelVersion: os.release(),
    operatingSystem: rel.PRETTY_NAME ?? 'Linux',
    osVersion: rel.VERSION_ID ?? '',
    architecture: machine,
    goArch: machine === 'x86_64' ? 'amd64' : machine === 'aarch64' ? 'arm64' : machine,
    ncpu: os.availableParallelism(),
    memTotal: os.totalmem(),
    hostname: os.hostname(),
    cgroupVersion: String(cgroupVersion()) as '1' | '2',
    kernelMemory: cgroupVersion() === 1 && existsSync(`${MEMORY_CGROUP_V1}/memory.kmem.limit_in_bytes`),
    kernelMemoryTCP: cgroupVersion() === 1 && existsSync(`${MEMORY_CGROUP_V1}/memory.kmem.tcp.limit_in_bytes`),
  };
  return cached;
}
