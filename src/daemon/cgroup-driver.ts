// native.cgroupdriver from exec-opts (spec §2.5, §8): cgroupfs on v1 hosts; systemd only where
// systemd runs; asking for systemd where it is not running refuses start-up.
import { existsSync } from 'node:fs';
import { invalidParameter } from '../errors.ts';
import { detectCgroupVersion } from './host-info.ts';

export function systemdRunning(): boolean {
  return existsSync('/run/systemd/system');
}

export function cgroupDriverFor(execOpts: string[]): 'cgroupfs' | 'systemd' {
  let requested: string | undefined;
  for (const opt of execOpts) {
    const [k, v] = opt.split('=', 2).map((s) => s.trim());
    if (k === 'native.cgroupdriver') requested = v;
  }
  if (requested === 'systemd') {
    if (!systemdRunning()) throw invalidParameter('native.cgroupdriver=systemd: systemd cgroup driver requested but systemd is not running');
    return 'systemd';
  }
  if (requested === 'cgroupfs') return 'cgroupfs';
  if (requested) throw invalidParameter(`native.cgroupdriver option ${requested} not supported`);
  return detectCgroupVersion() === '2' && systemdRunning() ? 'systemd' : 'cgroupfs';
}
