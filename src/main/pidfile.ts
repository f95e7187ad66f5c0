// The daemon's pid file: refuses to start a second daemon on the same file, replaces files left by
// dead daemons (or naming a process of another program: a crashed daemon's pid reused, or a file
// cut short), and only ever removes a file that still names this process.
import { readFileSync, readlinkSync } from 'node:fs';
import { chmod, link, mkdir, readFile, rename, unlink, writeFile } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import type { Logger } from '../util/log.ts';

export interface Pidfile {
  release(): Promise<void>;
}

export async function acquirePidfile(path: string, opts: { log?: Pick<Logger, 'warn'> } = {}): Promise<Pidfile> {
  const pid = process.pid;
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  const tmp = join(dirname(path), `.${basename(path)}.${pid}.tmp`);
  await writeFile(tmp, String(pid), { mode: 0o644 });
  try {
    await chmod(tmp, 0o644); // the umask must not narrow it
    // link() publishes the complete file and fails if one exists, so two daemons starting at
    // once cannot both win; an existing file is inspected and replaced only when stale.
    if (!(await linkExclusive(tmp, path))) {
      const holder = await readPid(path);
      if (holder !== undefined && holder !== pid && isAlive(holder)) {
        if (runsOurProgram(holder)) throw new Error(`pid file found, ensure engine is not running or delete ${path}`);
        opts.log?.warn(`the pid file ${path} names process ${holder}, which is not an engine daemon: taking it over`);
      }
      await rename(tmp, path);
    }
  } finally {
    await unlink(tmp).catch(() => {}); // The temporary file of a failed write: the write's error is the one reported.
  }
  return {
    async release() {
      if ((await readPid(path)) === pid) await unlink(path).catch(() => {}); // Another process may have removed or replaced it already: only our own pid file is removed.
    },
  };
}

/** true when `path` was created from `tmp`; false when it already existed. */
async function linkExclusive(tmp: string, path: string): Promise<boolean> {
  try {
    await link(tmp, path);
    return true;
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'EEXIST') return false;
    // Filesystems without hard links: fall back to the check-then-rename path.
    if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') return false;
    throw err;
  }
}

async function readPid(path: string): Promise<number | undefined> {
  try {
    const text = (await readFile(path, 'utf8')).trim();
    return /^[0-9]+$/.test(text) && Number(text) > 0 ? Number(text) : undefined;
  } catch {
    // ENOENT: no pid file
    return undefined;
  }
}

/** A process that exists and is not a zombie (a zombie's daemon is gone; only its parent lingers). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EPERM') return false;
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return true; // signalable but unreadable: assume it lives
  }
  // "pid (comm) S ...": comm may hold spaces and parentheses, so the state follows the last ')'.
  const state = stat.charAt(stat.lastIndexOf(')') + 2);
  return state !== 'Z' && state !== 'X';
}

/**
 * Whether `pid` runs the same executable as this process (the daemon is a Node program, so any
 * other executable cannot be a daemon holding the file). Unknown (unreadable) counts as yes.
 */
export function runsOurProgram(pid: number): boolean {
  try {
    return readlinkSync(`/proc/${pid}/exe`) === readlinkSync('/proc/self/exe');
  } catch (err) {
    // ENOENT: gone meanwhile, so not a daemon; EACCES and the like: cannot tell, assume it is one.
    return (err as NodeJS.ErrnoException).code !== 'ENOENT';
  }
}
