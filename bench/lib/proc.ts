// Process facts from /proc (resident memory, children) and the teardown of a daemon's temp dir:
// kill what runs from it (by pid), detach its mounts, remove it.

import { readdirSync, readFileSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { killProcessesUnder } from '../../src/supervisor/harness.ts';
import { unmountUnder } from '../../test/helpers/daemon.ts';

/** VmRSS of a process in MiB, or NaN when it is gone. */
export function rssMiB(pid: number | null | undefined): number {
  if (!pid) return NaN;
  try {
    const m = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

function statOf(pid: number): { comm: string; ppid: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const close = stat.lastIndexOf(')');
    const comm = stat.slice(stat.indexOf('(') + 1, close);
    const ppid = Number(stat.slice(close + 2).split(' ')[1]);
    return { comm, ppid };
  } catch {
    return null;
  }
}

/** The first direct child of `parent` whose command name is `comm`. */
export function childNamed(parent: number, comm: string): number | null {
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!pid) continue;
    const s = statOf(pid);
    if (s && s.ppid === parent && s.comm === comm) return pid;
  }
  return null;
}

export function pidFromFile(path: string): number | null {
  try {
    const pid = Number(readFileSync(path, 'utf8').trim());
    return pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

/** After the daemon is stopped: SIGKILL leftovers started from `dir` (containerd, shims), unmount, remove. */
export async function teardownDir(dir: string): Promise<void> {
  killProcessesUnder(dir);
  await new Promise((r) => setTimeout(r, 100));
  await unmountUnder(dir);
  await rm(dir, { recursive: true, force: true }).catch(async () => {
    await new Promise((r) => setTimeout(r, 500));
    await unmountUnder(dir);
    await rm(dir, { recursive: true, force: true });
  });
}

export function loadAverage(): string {
  try {
    return readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
  } catch {
    return '?';
  }
}
