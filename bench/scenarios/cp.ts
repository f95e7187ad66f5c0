// `docker cp` of a 100 MiB directory (100 × 1 MiB random files + 200 × 1 KiB) into a running
// container and back out, with the docker CLI pointed at the daemon; the copies are removed after
// each run so every run starts from the same state.

import { randomBytes } from 'node:crypto';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { run } from '../../test/helpers/daemon.ts';
import { api } from '../lib/http.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';

export const CP_TREE = { big: 100, bigBytes: 1 << 20, small: 200, smallBytes: 1 << 10 };

/** Writes the tree under a new temp dir; returns the tree's path (its parent is the temp dir). */
export async function makeCpTree(): Promise<string> {
  const root = await mkdtemp('/tmp/bench-cp-');
  const tree = join(root, 'tree');
  await mkdir(join(tree, 'small'), { recursive: true });
  for (let i = 0; i < CP_TREE.big; i++) await writeFile(join(tree, `big-${i}`), randomBytes(CP_TREE.bigBytes));
  for (let i = 0; i < CP_TREE.small; i++) await writeFile(join(tree, 'small', `s-${i}`), randomBytes(CP_TREE.smallBytes));
  return tree;
}

export interface CpRun {
  inMs: number;
  outMs: number;
}

async function docker(d: DaemonUnderTest, args: string[]): Promise<void> {
  const env: NodeJS.ProcessEnv = { ...process.env, DOCKER_HOST: `unix://${d.socket}`, DOCKER_CONFIG: join(d.dir, 'docker-config') };
  delete env.DOCKER_CONTEXT;
  const r = await run('docker', args, { env, timeoutMs: 300_000 });
  if (r.code !== 0) throw new Error(`${d.kind}: docker ${args.join(' ')} → ${r.code}: ${r.stderr.trim()}`);
}

/** Copies `tree` into container `id` at /tmp/tree and back out to `outDir`; both removed afterwards. */
export async function cpOnce(d: DaemonUnderTest, id: string, tree: string, outDir: string): Promise<CpRun> {
  await rm(outDir, { recursive: true, force: true });
  const t0 = performance.now();
  await docker(d, ['cp', tree, `${id}:/tmp/tree`]);
  const t1 = performance.now();
  await docker(d, ['cp', `${id}:/tmp/tree`, outDir]);
  const t2 = performance.now();
  await cleanInside(d, id);
  await rm(outDir, { recursive: true, force: true });
  return { inMs: t1 - t0, outMs: t2 - t1 };
}

/** rm -rf /tmp/tree in the container (detached exec, then poll until it is done). */
async function cleanInside(d: DaemonUnderTest, id: string): Promise<void> {
  const e = await api(d.socket, 'POST', `/containers/${id}/exec`, { Cmd: ['rm', '-rf', '/tmp/tree'] }, [201]);
  const execId = e.json<{ Id: string }>().Id;
  await api(d.socket, 'POST', `/exec/${execId}/start`, { Detach: true }, [200, 204]);
  for (let i = 0; i < 600; i++) {
    const info = (await api(d.socket, 'GET', `/exec/${execId}/json`, undefined, [200])).json<{
      Running: boolean;
      ExitCode: number | null;
    }>();
    if (!info.Running && info.ExitCode !== null) {
      if (info.ExitCode !== 0) throw new Error(`${d.kind}: rm -rf /tmp/tree exited ${info.ExitCode}`);
      return;
    }
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error(`${d.kind}: rm -rf /tmp/tree did not finish`);
}
