// Two filesystem trees compared as dockerd's archive.ChangesDirs compares them (what its graph
// drivers' Changes answer): metadata only — type, mode, owners, device, size, modification time,
// symlink target — never file contents; a directory with a change below it is listed as modified
// before its children; an added directory is listed with everything below it. `docker diff` on
// snapshotters without an upper directory reads this, and so does the layer of a commit or a RUN
// step there (commit-fast.ts): containerd's own walking differ reads the content of every file
// whose modification time has whole seconds, i.e. every file of most images.
import type { Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Change } from '../types/archive.ts';

export const CHANGE_MODIFY = 0;
export const CHANGE_ADD = 1;
export const CHANGE_DELETE = 2;

export async function lstatOrNull(p: string): Promise<Stats | null> {
  return lstat(p).catch(() => null); // Absent (or unreadable) on one side is exactly what the comparison reports as added or deleted.
}

export async function sortedNames(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort(); // A directory that cannot be listed compares as empty (its entries are reported as added/deleted).
}

export const sameTime = (a: Stats, b: Stats) =>
  a.mtimeMs === b.mtimeMs ||
  (Math.floor(a.mtimeMs / 1000) === Math.floor(b.mtimeMs / 1000) && (a.mtimeMs % 1000 === 0 || b.mtimeMs % 1000 === 0));

function differs(a: Stats, b: Stats, linkA: string | null, linkB: string | null): boolean {
  if ((a.mode & 0o170000) !== (b.mode & 0o170000)) return true;
  if (a.mode !== b.mode || a.uid !== b.uid || a.gid !== b.gid || a.rdev !== b.rdev) return true;
  if (a.isDirectory()) return false; // a directory's own entries are compared one by one
  if (a.size !== b.size || !sameTime(a, b)) return true;
  return linkA !== linkB;
}

/** Changes from oldRoot to newRoot by walking both (snapshotters without an upper directory). */
export async function treeChanges(oldRoot: string, newRoot: string): Promise<Change[]> {
  const changes: Change[] = [];
  const addAll = async (path: string): Promise<void> => {
    changes.push({ Path: path, Kind: CHANGE_ADD });
    const st = await lstatOrNull(join(newRoot, path));
    if (st?.isDirectory()) for (const n of await sortedNames(join(newRoot, path))) await addAll(`${path}/${n}`);
  };
  const walk = async (dir: string): Promise<void> => {
    const oldNames = new Set(await sortedNames(join(oldRoot, dir)));
    const newNames = new Set(await sortedNames(join(newRoot, dir)));
    const names = [...new Set([...oldNames, ...newNames])].sort();
    for (const name of names) {
      const path = dir === '/' ? `/${name}` : `${dir}/${name}`;
      // A name is on a side only if that side's listing has it: fuse-overlayfs before 1.15 answers a
      // lookup by name of what a lower layer has below a directory a higher layer made opaque (its
      // listing is right), so a file deleted with its directory would look unchanged.
      const a = oldNames.has(name) ? await lstatOrNull(join(oldRoot, path)) : null;
      const b = newNames.has(name) ? await lstatOrNull(join(newRoot, path)) : null;
      if (a && !b) changes.push({ Path: path, Kind: CHANGE_DELETE });
      else if (!a && b) await addAll(path);
      else if (a && b) {
        const la = a.isSymbolicLink() ? await readlink(join(oldRoot, path)) : null;
        const lb = b.isSymbolicLink() ? await readlink(join(newRoot, path)) : null;
        if (a.isDirectory() && b.isDirectory()) {
          const before = changes.length;
          if (differs(a, b, la, lb)) changes.push({ Path: path, Kind: CHANGE_MODIFY });
          await walk(path);
          if (changes.length > before && changes[before]!.Path !== path) changes.splice(before, 0, { Path: path, Kind: CHANGE_MODIFY });
        } else if (differs(a, b, la, lb)) {
          if (b.isDirectory()) await addAll(path);
          else changes.push({ Path: path, Kind: CHANGE_MODIFY });
        }
      }
    }
  };
  await walk('/');
  return changes;
}
