// --userns-remap on the host, once at start-up: resolves `default`, `user[:group]` or `uid[:gid]`
// to a user and group from /etc/passwd and /etc/group, creates the `engremap` user, group and their
// subordinate ranges for `default` (dockerd does the same for `dockremap`), and loads the ranges of
// /etc/subuid and /etc/subgid into an IdentityMap.
import { execFile } from 'node:child_process';
import { appendFile, readFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import { DEFAULT_RANGE_SIZE, IdentityMap, allSubIdRanges, mappingsFrom, nextFreeRange, parseRemapSetting, subIdRanges } from './userns.ts';

const execFileP = promisify(execFile);

/** The user (and group) `--userns-remap=default` creates. */
export const DEFAULT_REMAP_USER = 'engremap';

export interface HostFiles {
  passwd: string;
  group: string;
  subuid: string;
  subgid: string;
}

export const HOST_FILES: HostFiles = { passwd: '/etc/passwd', group: '/etc/group', subuid: '/etc/subuid', subgid: '/etc/subgid' };

interface Entry {
  name: string;
  id: number;
  gid?: number;
}

async function readOrEmpty(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw err;
  }
}

/** Entries of /etc/passwd (name, uid, gid) or /etc/group (name, gid). */
function parseDb(text: string, isPasswd: boolean): Entry[] {
  const out: Entry[] = [];
  for (const line of text.split('\n')) {
    const f = line.split(':');
    if (f.length < 3 || !f[0] || f[0].startsWith('#')) continue;
    const id = Number(f[2]);
    if (!Number.isSafeInteger(id)) continue;
    out.push(isPasswd ? { name: f[0], id, gid: Number(f[3]) } : { name: f[0], id });
  }
  return out;
}

function lookup(entries: Entry[], ref: string): Entry | undefined {
  return /^\d+$/.test(ref) ? entries.find((e) => e.id === Number(ref)) : entries.find((e) => e.name === ref);
}

/**
 * Creates the default remap user and group (a system account that cannot log in) and gives it a
 * 65536-id range after the highest one in use in /etc/subuid and /etc/subgid, through usermod (as
 * dockerd does; shadow-utils lock the files against concurrent edits). usermod refuses when a file
 * does not exist yet, so a missing one is created empty first. usermod edits the host's files:
 * `files` other than HOST_FILES (tests) only serve lookups of existing users.
 */
async function createDefaultUser(files: HostFiles): Promise<void> {
  const tool = async (cmd: string, args: string[]) => {
    try {
      await execFileP(cmd, args);
    } catch (err) {
      const e = err as { stderr?: string; message: string };
      throw new Error(`Error during "${DEFAULT_REMAP_USER}" user creation: ${(e.stderr || e.message).trim()}`, { cause: err });
    }
  };
  await tool('useradd', ['--system', '--user-group', '--shell', '/bin/false', '--no-create-home', DEFAULT_REMAP_USER]);
  const args: string[] = [];
  for (const [path, flag] of [
    [files.subuid, '--add-subuids'],
    [files.subgid, '--add-subgids'],
  ] as const) {
    await appendFile(path, '', { mode: 0o644 }); // exists afterwards, contents untouched
    const text = await readOrEmpty(path);
    if (subIdRanges(text, [DEFAULT_REMAP_USER]).length > 0) continue;
    const r = nextFreeRange(allSubIdRanges(text), DEFAULT_RANGE_SIZE);
    args.push(flag, `${r.start}-${r.start + r.length - 1}`);
  }
  if (args.length > 0) await tool('usermod', [...args, DEFAULT_REMAP_USER]);
}

/**
 * The identity map of --userns-remap, or undefined when the setting leaves user namespaces off
 * (`root`, as dockerd: a 1-to-1 mapping of root is no remapping; the caller warns).
 */
export async function resolveRemap(setting: string, files: HostFiles = HOST_FILES): Promise<IdentityMap | undefined> {
  const parsed = parseRemapSetting(setting);
  const isDefault = parsed.user === 'default';
  const userRef = isDefault ? DEFAULT_REMAP_USER : parsed.user;
  let users = parseDb(await readOrEmpty(files.passwd), true);
  let user = lookup(users, userRef);
  if (!user && isDefault) {
    await createDefaultUser(files);
    users = parseDb(await readOrEmpty(files.passwd), true);
    user = lookup(users, userRef);
  }
  if (!user)
    throw new Error(
      /^\d+$/.test(userRef) ? `Uid ${userRef} has no entry in /etc/passwd` : `Error during uid lookup for "${userRef}": no such user`,
    );
  if (user.id === 0) return undefined;
  const groups = parseDb(await readOrEmpty(files.group), false);
  const groupRef = isDefault ? DEFAULT_REMAP_USER : (parsed.group ?? user.name);
  const group = lookup(groups, groupRef);
  if (!group)
    throw new Error(
      /^\d+$/.test(groupRef) ? `Gid ${groupRef} has no entry in /etc/group` : `Error during gid lookup for "${groupRef}": no such group`,
    );
  // As dockerd: both files are searched by the user's name (or its numeric uid, which shadow-utils
  // also accept there).
  const names = [user.name, String(user.id)];
  const uids = subIdRanges(await readOrEmpty(files.subuid), names);
  if (uids.length === 0) throw new Error(`Can't create ID mappings: no subuid ranges found for user "${user.name}"`);
  const gids = subIdRanges(await readOrEmpty(files.subgid), names);
  if (gids.length === 0) throw new Error(`Can't create ID mappings: no subgid ranges found for user "${user.name}"`);
  return new IdentityMap(user.name, group.name, mappingsFrom(uids), mappingsFrom(gids));
}
