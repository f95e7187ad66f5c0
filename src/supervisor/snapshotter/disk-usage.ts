// Disk usage of a snapshot's directory, counted as containerd's snapshotters count it: every inode
// once (hard links share one), its allocated blocks in 512-byte units. The walk keeps its own stack
// (a container's tree can be arbitrarily deep) and awaits each call, so a large tree never holds
// the daemon's event loop.
import { lstat, readdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Usage } from './meta-store.ts';

export async function diskUsage(root: string): Promise<Usage> {
  const seen = new Set<string>();
  let size = 0;
  const stack = [root];
  while (stack.length) {
    const path = stack.pop()!;
    let st;
    try {
      st = await lstat(path, { bigint: true });
    } catch (err) {
      // A running container removed it between the listing and now; the root itself must exist.
      if (path !== root && (err as NodeJS.ErrnoException).code === 'ENOENT') continue;
      throw err;
    }
    const inode = `${st.dev}:${st.ino}`;
    if (!seen.has(inode)) {
      seen.add(inode);
      size += Number(st.blocks) * 512;
    }
    if (!st.isDirectory()) continue;
    try {
      for (const name of await readdir(path)) stack.push(join(path, name));
    } catch (err) {
      if (path !== root && (err as NodeJS.ErrnoException).code === 'ENOENT') continue; // removed meanwhile, as above
      throw err;
    }
  }
  return { size, inodes: seen.size };
}
