// `User` ("name", "uid", "name:group", "uid:gid") → numeric ids, from the container's own
// /etc/passwd and /etc/group. The rootfs is untrusted image content, so every path is resolved
// inside it: symlinks (absolute or with "..") are interpreted with the rootfs as "/", never the host's.

import { closeSync, constants, fstatSync, lstatSync, openSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { invalidParameter } from '../errors.ts';

export interface ResolvedUser {
  uid: number;
  gid: number;
  additionalGids: number[];
}

const MAX_ID = 2147483647;
const MAX_SYMLINKS = 255;

/**
 * `unsafePath` resolved under `root` as if `root` were "/": ".." stops at the root and symlink targets
 * are re-rooted, so the result always lies inside root. Components that do not exist are kept as
 * written.
 */
export function scopedPath(root: string, unsafePath: string): string {
  let pending = unsafePath.split('/').filter((p) => p !== '' && p !== '.');
  const resolved: string[] = [];
  let links = 0;
  while (pending.length > 0) {
    const part = pending.shift()!;
    if (part === '..') {
      resolved.pop();
      continue;
    }
    if (part === '.') continue;
    const candidate = join(root, ...resolved, part);
    let isLink = false;
    try {
      isLink = lstatSync(candidate).isSymbolicLink();
    } catch {
      // missing: keep the name lexically
    }
    if (!isLink) {
      resolved.push(part);
      continue;
    }
    if (++links > MAX_SYMLINKS)
      throw invalidParameter(`too many symbolic links resolving ${unsafePath} in the container's root filesystem`);
    const target = readlinkSync(candidate);
    if (target.startsWith('/')) resolved.length = 0;
    pending = [...target.split('/').filter((p) => p !== '' && p !== '.'), ...pending];
  }
  return join(root, ...resolved);
}

/** Reads a regular file inside the rootfs; undefined when it does not exist. */
function readScoped(root: string, path: string): string | undefined {
  const p = scopedPath(root, path);
  let fd: number;
  try {
    // O_NOFOLLOW: the last component was just resolved; refuse a symlink swapped in meanwhile.
    fd = openSync(p, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return undefined;
    throw err;
  }
  try {
    if (!fstatSync(fd).isFile()) return undefined;
    return readFileSync(fd, 'utf8');
  } finally {
    closeSync(fd);
  }
}

interface PasswdEntry {
  name: string;
  uid: number;
  gid: number;
}
interface GroupEntry {
  name: string;
  gid: number;
  members: string[];
}

function lines(text: string | undefined): string[][] {
  if (!text) return [];
  return text
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l !== '' && !l.startsWith('#'))
    .map((l) => l.split(':'));
}

export function parsePasswd(text: string | undefined): PasswdEntry[] {
  return lines(text)
    .filter((f) => f.length >= 4)
    .map((f) => ({ name: f[0]!, uid: Number.parseInt(f[2]!, 10), gid: Number.parseInt(f[3]!, 10) }))
    .filter((e) => Number.isInteger(e.uid) && Number.isInteger(e.gid));
}

export function parseGroup(text: string | undefined): GroupEntry[] {
  return lines(text)
    .filter((f) => f.length >= 3)
    .map((f) => ({
      name: f[0]!,
      gid: Number.parseInt(f[2]!, 10),
      members: (f[3] ?? '')
        .split(',')
        .map((m) => m.trim())
        .filter(Boolean),
    }))
    .filter((e) => Number.isInteger(e.gid));
}

function numericId(s: string): number | undefined {
  if (!/^\d+$/.test(s)) return undefined;
  const n = Number(s);
  if (n > MAX_ID) throw invalidParameter(`uids and gids must be in range 0-${MAX_ID}`);
  return n;
}

/**
 * Resolves the container user. Empty/absent spec = root (uid 0, with root's gid from /etc/passwd).
 * Supplementary groups: the primary gid, the user's /etc/group memberships (only when no group was
 * given explicitly, as in runc) and GroupAdd entries (names or numbers).
 */
export function resolveUser(rootfs: string, userSpec: string | undefined, groupAdd: readonly string[] = []): ResolvedUser {
  const spec = userSpec ?? '';
  const colon = spec.indexOf(':');
  const userArg = (colon >= 0 ? spec.slice(0, colon) : spec) || '0';
  const groupArg = colon >= 0 ? spec.slice(colon + 1) : '';

  const passwd = parsePasswd(readScoped(rootfs, '/etc/passwd'));
  const needGroups = groupArg !== '' || groupAdd.length > 0 || passwd.length > 0;
  const groups = needGroups ? parseGroup(readScoped(rootfs, '/etc/group')) : [];

  const uidNum = numericId(userArg);
  const entry = passwd.find((e) => e.name === userArg || (uidNum !== undefined && e.uid === uidNum));
  let uid: number;
  let gid = 0;
  if (entry) {
    uid = entry.uid;
    gid = entry.gid;
  } else if (uidNum !== undefined) {
    uid = uidNum;
  } else {
    throw invalidParameter(`unable to find user ${userArg}: no matching entries in passwd file`);
  }

  const additional: number[] = [];
  if (groupArg !== '') {
    const gidNum = numericId(groupArg);
    const g = groups.find((e) => e.name === groupArg || (gidNum !== undefined && e.gid === gidNum));
    if (g) gid = g.gid;
    else if (gidNum !== undefined) gid = gidNum;
    else throw invalidParameter(`unable to find group ${groupArg}: no matching entries in group file`);
  } else if (entry) {
    for (const g of groups) if (g.members.includes(entry.name)) additional.push(g.gid);
  }

  for (const ag of groupAdd) {
    const gidNum = numericId(ag);
    const g = groups.find((e) => e.name === ag || (gidNum !== undefined && e.gid === gidNum));
    if (g) additional.push(g.gid);
    else if (gidNum !== undefined) additional.push(gidNum);
    else throw invalidParameter(`Unable to find group ${ag}: no matching entries in group file`);
  }

  // The primary gid leads the list (as dockerd does): setgroups() replaces all groups, and a
  // process should stay a member of its own group.
  return { uid, gid, additionalGids: [...new Set([gid, ...additional])] };
}
