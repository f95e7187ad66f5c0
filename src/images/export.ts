// `docker export`: the container's filesystem as one tar. The writable snapshot is mounted
// read-only on a private temporary directory (never the running container's own mount) and walked
// in lexical order, like dockerd's archive of a rootfs.
import { lstat, readdir, readlink } from 'node:fs/promises';
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import { readOnlyMounts, withMounted } from '../supervisor/mounts.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import { TarWriter } from '../util/tar-writer.ts';
import type { ContainerSnapshot } from './container-facts.ts';

// Linux dev_t encoding (glibc's major()/minor()).
const major = (rdev: number) => Number(((BigInt(rdev) >> 8n) & 0xfffn) | ((BigInt(rdev) >> 32n) & ~0xfffn));
const minor = (rdev: number) => Number((BigInt(rdev) & 0xffn) | ((BigInt(rdev) >> 12n) & ~0xffn));

/**
 * Writes every entry below `root` (not the root itself) to the tar writer; `ids` translates owners
 * (a remapped container's files are written as the container sees them).
 */
export async function tarTree(root: string, tw: TarWriter, ids?: ContainerSnapshot['remap']): Promise<void> {
  const hardlinks = new Map<string, string>();
  const walk = async (rel: string): Promise<void> => {
    const names = (await readdir(join(root, rel))).sort();
    for (const name of names) {
      const path = rel ? `${rel}/${name}` : name;
      const abs = join(root, path);
      let st: Stats;
      try {
        st = await lstat(abs);
      } catch {
        continue; // vanished while we walked (a running container)
      }
      const common = { mode: st.mode & 0o7777, uid: ids ? ids.uid(st.uid) : st.uid, gid: ids ? ids.gid(st.gid) : st.gid, mtime: st.mtime };
      if (st.isDirectory()) {
        await tw.directory(path, common);
        await walk(path);
      } else if (st.isSymbolicLink()) {
        await tw.symlink(path, await readlink(abs), common);
      } else if (st.isFile()) {
        const key = `${st.dev}:${st.ino}`;
        const first = st.nlink > 1 ? hardlinks.get(key) : undefined;
        if (first) await tw.hardlink(path, first, common);
        else {
          if (st.nlink > 1) hardlinks.set(key, path);
          await tw.fileFromPath(path, abs, common);
        }
      } else if (st.isCharacterDevice() || st.isBlockDevice()) {
        await tw.entry({
          ...common,
          name: path,
          type: st.isCharacterDevice() ? 'char' : 'block',
          devmajor: major(st.rdev),
          devminor: minor(st.rdev),
        });
      } else if (st.isFIFO()) {
        await tw.entry({ ...common, name: path, type: 'fifo' });
      }
      // sockets are not archived (as in dockerd)
    }
  };
  await walk('');
}

export async function writeContainerExport(client: SupervisorClient, c: ContainerSnapshot, tmpDir: string, out: Writable): Promise<void> {
  const mounts = readOnlyMounts(await client.snapshots.mounts(c.snapshotKey, { snapshotter: c.snapshotter }));
  await withMounted(mounts, tmpDir, async (root) => {
    const tw = new TarWriter(out);
    await tarTree(root, tw, c.remap);
    await tw.finish();
  });
}
