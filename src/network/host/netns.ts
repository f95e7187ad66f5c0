// Network namespaces the daemon creates for containers: a persistent namespace (bind-mounted on a
// file under exec-root) with loopback up, so it outlives the task and a daemon restart.
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { runCommand } from '../../util/helper-shell.ts';

export function netnsPath(execRoot: string, id: string): string {
  return join(execRoot, 'netns', id);
}

export async function createNetns(execRoot: string, id: string): Promise<string> {
  const path = netnsPath(execRoot, id);
  await mkdir(join(execRoot, 'netns'), { recursive: true, mode: 0o700 });
  await writeFile(path, '');
  // unshare bind-mounts the new namespace on `path` and runs `ip` inside it: one process for both.
  await runCommand('unshare', [`--net=${path}`, 'ip', 'link', 'set', 'lo', 'up']);
  return path;
}

export async function removeNetns(path: string): Promise<void> {
  await runCommand('umount', ['-l', path]).catch(() => undefined); // Not mounted (a set-up that failed before unshare): nothing to detach, the file goes below.
  await rm(path, { force: true });
}
