// Orphan shims: containerd-shim-runc-v2 processes of our containerd that serve no task containerd
// knows. containerd 1.6 leaves one behind when the client that asked for a task dies during the
// Create (a daemon killed -9 mid-start): the shim is up, containerd dropped the task, and nobody
// will ever ask that shim to exit. They are found by command line (`-address <our socket>`) and,
// when containerd lists no task of that ID in that namespace, ended: their container processes
// first (runc state, then the shim's children), then the shim, then its socket.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile, rm } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../util/log.ts';
import { runCommand } from '../util/helper-shell.ts';

export interface ShimProcess {
  pid: number;
  namespace: string;
  id: string;
}

/** Where containerd 1.6 puts a shim's socket: /run/containerd/s/<sha256 of address/namespace/id>. */
export const SHIM_SOCKET_DIR = '/run/containerd/s';

export function shimSocketPath(address: string, namespace: string, id: string): string {
  return path.join(
    SHIM_SOCKET_DIR,
    createHash('sha256')
      .update(path.join(address, namespace, id))
      .digest('hex'),
  );
}

/** A socket address as the shim is given it: a path, without any unix:// scheme. */
const bare = (address: string) => address.replace(/^unix:\/\//, '');

function argAfter(argv: string[], flag: string): string | undefined {
  const i = argv.indexOf(flag);
  return i >= 0 ? argv[i + 1] : undefined;
}

/** How many /proc entries are read at once: the scan must not hold the event loop. */
const SCAN_BATCH = 64;
const SHIM_MARK = Buffer.from('containerd-shim');

/**
 * Shim processes (any containerd-shim-* binary) serving the containerd at `address`. Reads every
 * /proc/<pid>/cmdline, asynchronously and in batches: on a host with thousands of processes a
 * synchronous scan held the daemon for most of a second.
 */
export async function findShims(address: string): Promise<ShimProcess[]> {
  address = bare(address);
  const pids = (await readdir('/proc')).map(Number).filter((pid) => pid > 0);
  const out: ShimProcess[] = [];
  for (let i = 0; i < pids.length; i += SCAN_BATCH) {
    await Promise.all(
      pids.slice(i, i + SCAN_BATCH).map(async (pid) => {
        const raw = await readFile(`/proc/${pid}/cmdline`).catch(() => undefined); // A process that exits while we look has nothing to end.
        if (!raw || !raw.includes(SHIM_MARK)) return;
        const shim = parseShim(pid, raw.toString('utf8').split('\0'), address);
        if (shim) out.push(shim);
      }),
    );
  }
  return out;
}

function parseShim(pid: number, argv: string[], address: string): ShimProcess | undefined {
  if (!path.basename(argv[0] ?? '').startsWith('containerd-shim')) return undefined;
  if (bare(argAfter(argv, '-address') ?? '') !== address) return undefined;
  const namespace = argAfter(argv, '-namespace');
  const id = argAfter(argv, '-id');
  // The shim's `start` and `delete` invocations end with that action word and end by themselves.
  const action = argv.filter(Boolean).at(-1);
  if (!namespace || !id || action === 'start' || action === 'delete') return undefined;
  return { pid, namespace, id };
}

/** Direct children of a process (the shim's container init, if any). */
function childrenOf(pid: number): number[] {
  const kids: number[] = [];
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return kids; // gone already
  }
  for (const t of tasks) {
    try {
      for (const c of readFileSync(`/proc/${pid}/task/${t}/children`, 'utf8').split(' ')) if (Number(c) > 0) kids.push(Number(c));
    } catch {
      // ENOENT: that thread ended meanwhile
    }
  }
  return kids;
}

function kill(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ESRCH') throw err; // ESRCH: already gone, as wanted
  }
}

async function gone(pid: number, timeoutMs: number): Promise<boolean> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let state: string;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      state = stat.charAt(stat.lastIndexOf(')') + 2);
    } catch {
      // ENOENT: the process is gone
      return true;
    }
    if (state === 'Z' || state === 'X') return true;
    if (Date.now() > deadline) return false;
    await new Promise((r) => setTimeout(r, 20));
  }
}

export interface ReapOptions {
  address: string;
  /** The shims found (findShims) before `tasks` was listed. */
  shims: ShimProcess[];
  /** Task IDs containerd knows, per namespace; a namespace missing here is left alone. */
  tasks: Map<string, Set<string>>;
  /** runc's state root (runc Options.root); the shim uses <root>/<namespace>. */
  runcRoot: string;
  log: Pick<Logger, 'warn' | 'info' | 'debug'>;
}

/** Ends every shim of `address` whose task containerd does not know; returns the IDs ended. */
export async function reapOrphanShims(o: ReapOptions): Promise<string[]> {
  const orphans = o.shims.filter((shim) => {
    const known = o.tasks.get(shim.namespace);
    return known && !known.has(shim.id);
  });
  // All at once: this runs on the way to the first /_ping after a crash.
  const ended = await Promise.all(
    orphans.map(async (shim) => {
      o.log.info('ending a shim whose task containerd does not know', { pid: shim.pid, namespace: shim.namespace, id: shim.id });
      try {
        await endShim(shim, o);
        return shim.id;
      } catch (err) {
        o.log.warn(`could not end the orphan shim ${shim.pid} (${shim.id}): ${(err as Error).message}`);
        return undefined;
      }
    }),
  );
  return ended.filter((id): id is string => id !== undefined);
}

/** Ends one shim: its container's processes (runc state, then its children), the shim, its socket. */
export async function endShim(shim: ShimProcess, o: Pick<ReapOptions, 'address' | 'runcRoot' | 'log'>): Promise<void> {
  const runcRoot = path.join(o.runcRoot, shim.namespace);
  if (existsSync(path.join(runcRoot, shim.id))) {
    // The container the shim made (even one only created): runc kills its processes and forgets it.
    await runCommand('runc', ['--root', runcRoot, 'delete', '--force', shim.id]).catch((err: Error) =>
      o.log.debug(`runc delete of an orphan: ${err.message}`, { id: shim.id }),
    );
  }
  for (const child of childrenOf(shim.pid)) kill(child);
  kill(shim.pid);
  if (!(await gone(shim.pid, 5000))) throw new Error('still running 5 s after SIGKILL');
  await rm(shimSocketPath(bare(o.address), shim.namespace, shim.id), { force: true });
}
