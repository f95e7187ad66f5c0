// Test support for the unit tests that run a containerd (supervisor, blob writer) and for the
// bench: a temp data-root/exec-root, a logger that records lines, and a cleanup that leaves nothing
// behind even after a failed test — processes started under the temp dir (containerd, shims) are
// killed, mounts under it detached.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { Logger, type LogLevel } from '../../src/util/log.ts';

export interface TestEnv {
  dir: string;
  dataRoot: string;
  execRoot: string;
  log: Logger;
  /** Every line the logger wrote. */
  lines: string[];
  /** Runs on cleanup, last registered first. */
  defer(fn: () => unknown): void;
  cleanup(): Promise<void>;
}

export async function makeTestEnv(prefix = 'sup-', level: LogLevel = 'info'): Promise<TestEnv> {
  // Short paths: unix socket paths must stay under 108 bytes.
  const dir = await fs.promises.mkdtemp(path.join(os.tmpdir(), prefix));
  const lines: string[] = [];
  const echo = process.env.ENGINE_TEST_LOG === '1';
  const out = new Writable({
    write(chunk, _enc, cb) {
      for (const l of String(chunk).split('\n')) if (l) lines.push(l);
      if (echo) process.stderr.write(chunk);
      cb();
    },
  });
  const log = new Logger({ level, format: 'text', raw: false }, {}, out);
  const deferred: (() => unknown)[] = [];
  return {
    dir,
    dataRoot: path.join(dir, 'data'),
    execRoot: path.join(dir, 'exec'),
    log,
    lines,
    defer: (fn) => deferred.push(fn),
    cleanup: async () => {
      for (const fn of deferred.reverse()) {
        try {
          await fn();
        } catch {
          // keep cleaning
        }
      }
      killProcessesUnder(dir);
      unmountUnder(dir);
      await fs.promises.rm(dir, { recursive: true, force: true });
    },
  };
}

/** SIGKILLs processes whose command line mentions dir (our containerd and its shims). */
export function killProcessesUnder(dir: string): number[] {
  const killed: number[] = [];
  for (const entry of fs.readdirSync('/proc')) {
    const pid = Number(entry);
    if (!pid || pid === process.pid) continue;
    let cmd = '';
    try {
      cmd = fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8');
    } catch {
      continue;
    }
    if (!cmd.includes(dir)) continue;
    try {
      process.kill(pid, 'SIGKILL');
      killed.push(pid);
    } catch {
      // gone
    }
  }
  return killed;
}

export function mountsUnder(dir: string): string[] {
  return fs
    .readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' ')[4] ?? '')
    .filter((m) => m === dir || m.startsWith(dir + '/'));
}

function unmountUnder(dir: string): void {
  for (const m of mountsUnder(dir).sort((a, b) => b.length - a.length)) {
    try {
      execFileSync('umount', ['-l', m]);
    } catch {
      // already gone
    }
  }
}

export function pidAlive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return false;
  }
}

export async function waitFor<T>(what: string, fn: () => T | Promise<T>, timeoutMs = 10_000, everyMs = 20): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
