// Plants what a daemon killed during a task Create leaves behind: a real containerd-shim-runc-v2
// serving the daemon's containerd for a task containerd never registered. The shim's `start`
// action is run by hand in a throwaway bundle; the shim writes its log to a FIFO that must have a
// reader, so a `cat` reads it for as long as the test needs the shim.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findShims } from '../../src/supervisor/shims.ts';
import { run } from './daemon.ts';

export interface PlantedShim {
  pid: number;
  /** The socket file the shim listens on (under /run/containerd/s). */
  socket: string;
  alive(): boolean;
  /** Kills what is left (the shim if still alive, the log reader) and removes the bundle. */
  cleanup(): Promise<void>;
}

export async function plantOrphanShim(address: string, namespace: string, id: string): Promise<PlantedShim> {
  const dir = await mkdtemp(join(tmpdir(), 'engine-shim-'));
  const bundle = join(dir, 'bundle');
  await mkdir(bundle);
  await writeFile(
    join(bundle, 'config.json'),
    JSON.stringify({ ociVersion: '1.0.2', process: { args: ['true'], cwd: '/' }, root: { path: 'rootfs' } }),
  );
  const mk = await run('mkfifo', [join(bundle, 'log')]);
  if (mk.code !== 0) throw new Error(`mkfifo: ${mk.stderr}`);
  const reader: ChildProcess = spawn('cat', [join(bundle, 'log')], { stdio: ['ignore', 'ignore', 'ignore'] });
  const start = await new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
    const c = spawn(
      'containerd-shim-runc-v2',
      ['-namespace', namespace, '-id', id, '-address', address, '-publish-binary', 'containerd', 'start'],
      {
        cwd: bundle,
        env: { ...process.env, TTRPC_ADDRESS: `${address}.ttrpc` },
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    let stderr = '';
    c.stdout.on('data', (d) => (stdout += d));
    c.stderr.on('data', (d) => (stderr += d));
    c.on('error', reject);
    c.on('close', (code) => resolve({ code, stdout, stderr }));
  });
  if (start.code !== 0) {
    reader.kill('SIGKILL');
    throw new Error(`shim start failed (${start.code}): ${start.stderr}`);
  }
  const socket = start.stdout.trim().replace(/^unix:\/\//, '');
  // containerd 1.6's shim writes no pid file when started by hand: found by its command line.
  let pid: number | undefined;
  for (let i = 0; i < 100 && !pid; i++) {
    pid = (await findShims(address)).find((s) => s.id === id && s.namespace === namespace)?.pid;
    if (!pid) await new Promise((r) => setTimeout(r, 20));
  }
  if (!pid) {
    reader.kill('SIGKILL');
    throw new Error(`the shim for ${id} did not stay up`);
  }
  const alive = () => {
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      const state = stat.charAt(stat.lastIndexOf(')') + 2);
      return state !== 'Z' && state !== 'X';
    } catch {
      return false;
    }
  };
  return {
    pid,
    socket,
    alive,
    async cleanup() {
      if (alive()) process.kill(pid, 'SIGKILL');
      reader.kill('SIGKILL');
      await rm(socket, { force: true });
      await rm(dir, { recursive: true, force: true });
    },
  };
}
