// A containerd that is not the daemon's child (left running by a previous daemon): found by its
// pidfile or its config on a command line in /proc, watched for its exit by polling, and stopped
// with SIGTERM, then SIGKILL after a timeout. A zombie counts as gone.

import fs from 'node:fs';
import path from 'node:path';
import type { Logger } from '../util/log.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function cmdlineOf(pid: number): string[] | null {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  } catch {
    // ENOENT: the process is gone
    return null;
  }
}

export function isAlive(pid: number): boolean {
  try {
    // A zombie (dead, not yet reaped by whoever inherited it) counts as gone.
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    // ENOENT: the process is gone
    return false;
  }
}

/** The containerd a previous daemon started with this config, if it is still running. */
export function findStaleContainerd(pidFile: string, configPath: string): number | null {
  const isOurs = (pid: number) => {
    const cmd = cmdlineOf(pid);
    return !!cmd && isAlive(pid) && path.basename(cmd[0] ?? '') === 'containerd' && cmd.includes(configPath);
  };
  try {
    const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
    if (pid > 0 && isOurs(pid)) return pid;
  } catch {
    // no pidfile (ENOENT), or not a number: look on the command lines below
  }
  // The pidfile may be gone (exec-root on tmpfs cleaned, …): look for our config on a command line.
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry);
    if (pid > 0 && pid !== process.pid && isOurs(pid)) return pid;
  }
  return null;
}

/** Calls onGone once the process has exited (not our child, so no 'exit' event: polled). */
export function watchExit(pid: number, intervalMs: number, onGone: () => void): NodeJS.Timeout {
  const timer = setInterval(() => {
    if (isAlive(pid)) return;
    clearInterval(timer);
    onGone();
  }, intervalMs);
  timer.unref();
  return timer;
}

/** Stops a containerd that is not our child (no exit event: poll /proc). */
export async function terminateProcess(pid: number, timeoutMs: number, log: Logger): Promise<void> {
  const signal = (sig: NodeJS.Signals) => {
    try {
      process.kill(pid, sig);
    } catch {
      // ESRCH: already gone
    }
  };
  signal('SIGTERM');
  const deadline = Date.now() + timeoutMs;
  while (isAlive(pid) && Date.now() < deadline) await sleep(20);
  if (isAlive(pid)) {
    log.warn('containerd did not stop in time, killing it', { pid, timeoutMs });
    signal('SIGKILL');
    while (isAlive(pid)) await sleep(20);
  }
}
