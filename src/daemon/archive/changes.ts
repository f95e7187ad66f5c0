// GET /containers/{id}/changes: what the container changed in its writable layer, relative to the
// layer below (the init layer, so the runtime's mount points stay out). With overlayfs the upper
// directory is that change set: whiteouts (character devices 0:0) are deletions, the rest is an
// addition unless a lower layer has the path (then a modification); a directory that only changed
// because something inside it did is listed as modified before its children, as dockerd's
// comparison of the two trees lists it (that is what its graph drivers answer, overlay2 too). Other
// snapshotters: both trees are walked and compared.
import type { Stats } from 'node:fs';
import { lstat, readdir, readlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Change } from '../../types/archive.ts';
import { parseGetfattr } from '../../images/overlay-diff.ts';
import { runCommand } from '../../util/helper-shell.ts';

export const CHANGE_MODIFY = 0;
export const CHANGE_ADD = 1;
export const CHANGE_DELETE = 2;

async function lstatOrNull(p: string): Promise<Stats | null> {
  return lstat(p).catch(() => null); // Absent (or unreadable) on one side is exactly what the comparison reports as added or deleted.
}

async function sortedNames(dir: string): Promise<string[]> {
  return (await readdir(dir).catch(() => [] as string[])).sort(); // A directory that cannot be listed compares as empty (its entries are reported as added/deleted).
}

const sameTime = (a: Stats, b: Stats) =>
  a.mtimeMs === b.mtimeMs ||
  (Math.floor(a.mtimeMs / 1000) === Math.floor(b.mtimeMs / 1000) && (a.mtimeMs % 1000 === 0 || b.mtimeMs % 1000 === 0));
const isWhiteout = (st: Stats) => st.isCharacterDevice() && st.rdev === 0;

/**
 * The opaque directories of an upper directory (overlay's opaque xattr: a directory made anew over
 * a lower one, hiding what the lowers have below it), as container paths; null when they cannot be
 * read (no getfattr): the caller then compares the two trees instead.
 */
export async function opaqueDirs(upper: string): Promise<Set<string> | null> {
  let out: string;
  try {
    out = await runCommand('getfattr', [
      '-R',
      '-P',
      '-h',
      '-d',
      '-m',
      '^(trusted|user)\\.overlay\\.opaque$',
      '-e',
      'text',
      '--absolute-names',
      upper,
    ]);
  } catch {
    return null; // getfattr missing or the tree unreadable: the two-tree walk answers
  }
  const dirs = new Set<string>();
  for (const [path, attrs] of parseGetfattr(out)) {
    if (![...attrs.values()].some((v) => v.toString() === 'y')) continue;
    if (path.startsWith(`${upper}/`)) dirs.add(path.slice(upper.length));
  }
  return dirs;
}

/**
 * Changes recorded in an overlay upper directory; lowers are the lower directories, top first;
 * `opaque`: the upper's opaque directories (opaqueDirs), below which everything the lowers had is
 * gone unless the upper has it again.
 */
export async function overlayChanges(upper: string, lowers: string[], opaque: Set<string> = new Set()): Promise<Change[]> {
  const changes: Change[] = [];
  const inLower = async (path: string): Promise<Stats | null> => {
    for (const l of lowers) {
      const st = await lstatOrNull(join(l, path));
      if (st) return isWhiteout(st) ? null : st;
    }
    return null;
  };
  /** What the lowers have directly below `dir` (whiteouts in a lower hide names of the ones under it). */
  const lowerNames = async (dir: string): Promise<string[]> => {
    const names = new Set<string>();
    for (const l of lowers) for (const n of await sortedNames(join(l, dir))) names.add(n);
    const seen: string[] = [];
    for (const n of [...names].sort()) if (await inLower(dir === '/' ? `/${n}` : `${dir}/${n}`)) seen.push(n);
    return seen;
  };
  const walk = async (dir: string, hidden = false): Promise<void> => {
    const here = await sortedNames(join(upper, dir));
    // In and below an opaque directory the lowers' entries are gone, unless the upper has the name again.
    hidden ||= opaque.has(dir);
    if (hidden) {
      const kept = new Set(here);
      for (const n of await lowerNames(dir))
        if (!kept.has(n)) changes.push({ Path: dir === '/' ? `/${n}` : `${dir}/${n}`, Kind: CHANGE_DELETE });
    }
    for (const name of here) {
      const path = dir === '/' ? `/${name}` : `${dir}/${name}`;
      const st = await lstatOrNull(join(upper, path));
      if (!st) continue;
      let kind: Change['Kind'];
      let record = true;
      if (isWhiteout(st)) {
        kind = CHANGE_DELETE;
      } else {
        // Compared with the lowers even below an opaque directory, as dockerd's walk of the old and
        // new trees compares a name both have.
        const below = await inLower(path);
        kind = below ? CHANGE_MODIFY : CHANGE_ADD;
        // A directory copied up only because something below it changed is not itself a change…
        if (below && below.isDirectory() && st.isDirectory() && below.mode === st.mode && below.size === st.size && sameTime(below, st))
          record = false;
      }
      if (record) changes.push({ Path: path, Kind: kind });
      if (!st.isDirectory()) continue;
      const atEntry = changes.length;
      await walk(path, hidden);
      // … but it is listed (before what changed inside it) when anything below it is, as dockerd's
      // walk of both trees (archive.ChangesDirs, what its drivers' Changes use) does.
      if (!record && changes.length > atEntry) changes.splice(atEntry, 0, { Path: path, Kind: CHANGE_MODIFY });
    }
  };
  await walk('/');
  return changes;
}

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
    const newNames = await sortedNames(join(newRoot, dir));
    const names = [...new Set([...oldNames, ...newNames])].sort();
    for (const name of names) {
      const path = dir === '/' ? `/${name}` : `${dir}/${name}`;
      const a = oldNames.has(name) ? await lstatOrNull(join(oldRoot, path)) : null;
      const b = await lstatOrNull(join(newRoot, path));
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
