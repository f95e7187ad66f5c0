// GET /containers/{id}/changes: what the container changed in its writable layer, relative to the
// layer below (the init layer, so the runtime's mount points stay out). With overlayfs the upper
// directory is that change set: whiteouts (character devices 0:0) are deletions, the rest is an
// addition unless a lower layer has the path (then a modification); a directory that only changed
// because something inside it did is listed as modified before its children, as dockerd's
// comparison of the two trees lists it (that is what its graph drivers answer, overlay2 too). Other
// snapshotters: both trees are walked and compared (images/tree-diff.ts).
import type { Stats } from 'node:fs';
import { join } from 'node:path';
import type { Change } from '../../types/archive.ts';
import { parseGetfattr } from '../../images/overlay-diff.ts';
import { CHANGE_ADD, CHANGE_DELETE, CHANGE_MODIFY, lstatOrNull, sameTime, sortedNames } from '../../images/tree-diff.ts';
import { runCommand } from '../../util/helper-shell.ts';

export { CHANGE_ADD, CHANGE_DELETE, CHANGE_MODIFY, treeChanges } from '../../images/tree-diff.ts';

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
