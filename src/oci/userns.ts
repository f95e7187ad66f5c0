// User-namespace id mappings (--userns-remap): the ranges of /etc/subuid and /etc/subgid laid end to
// end from container id 0 up, as dockerd does; translation of container ids to host ids (for the
// remapped image copies, volume and bind directories) and the OCI spec's uidMappings/gidMappings.
// Pure: reading and writing the host's files is userns-setup.ts's job.
import { invalidParameter } from '../errors.ts';

/** One line of the OCI spec's linux.uidMappings / gidMappings. */
export interface IdMapping {
  containerID: number;
  hostID: number;
  size: number;
}

/** A subordinate range as /etc/subuid lists it: `name:start:count`. */
export interface SubIdRange {
  start: number;
  length: number;
}

/** Both directions of a remap: the user and group it came from and the id mappings. */
export class IdentityMap {
  constructor(
    readonly user: string,
    readonly group: string,
    readonly uids: readonly IdMapping[],
    readonly gids: readonly IdMapping[],
  ) {
    if (uids.length === 0 || gids.length === 0) throw new Error('an identity map needs at least one uid and one gid range');
  }

  /** Host uid of container root (the first subordinate uid). */
  get rootUid(): number {
    return this.toHostUid(0);
  }

  get rootGid(): number {
    return this.toHostGid(0);
  }

  /** `<uid>.<gid>` of container root: the name of the remapped data tree and of remapped layers. */
  get key(): string {
    return `${this.rootUid}.${this.rootGid}`;
  }

  toHostUid(id: number): number {
    return translate(this.uids, id, 'uid');
  }

  toHostGid(id: number): number {
    return translate(this.gids, id, 'gid');
  }

  /** The container's view of a host uid; one outside the ranges shows as the overflow id (65534), as in the kernel. */
  toContainerUid(id: number): number {
    return reverse(this.uids, id);
  }

  toContainerGid(id: number): number {
    return reverse(this.gids, id);
  }
}

/** The kernel's overflow id: what a process in the namespace sees for an unmapped owner. */
export const OVERFLOW_ID = 65534;

function reverse(ranges: readonly IdMapping[], id: number): number {
  for (const r of ranges) {
    if (id >= r.hostID && id < r.hostID + r.size) return r.containerID + (id - r.hostID);
  }
  return OVERFLOW_ID;
}

function translate(ranges: readonly IdMapping[], id: number, what: string): number {
  for (const r of ranges) {
    if (id >= r.containerID && id < r.containerID + r.size) return r.hostID + (id - r.containerID);
  }
  throw invalidParameter(`Container ID ${id} cannot be mapped to a host ID (${what} outside the remapped ranges)`);
}

/** The ranges one name (or numeric id) owns in the text of /etc/subuid or /etc/subgid. */
export function subIdRanges(text: string, names: readonly string[]): SubIdRange[] {
  const out: SubIdRange[] = [];
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line || line.startsWith('#')) continue;
    const [name, start, count] = line.split(':');
    if (!name || !names.includes(name)) continue;
    const s = Number(start);
    const n = Number(count);
    if (!Number.isSafeInteger(s) || !Number.isSafeInteger(n) || s < 0 || n <= 0) continue; // a malformed line grants nothing
    out.push({ start: s, length: n });
  }
  return out;
}

/** Every range of a subordinate-id file, whoever owns it (to find a free one). */
export function allSubIdRanges(text: string): SubIdRange[] {
  const names = new Set<string>();
  for (const line of text.split('\n')) {
    const name = line.trim().split(':')[0];
    if (name && !name.startsWith('#')) names.add(name);
  }
  return subIdRanges(text, [...names]);
}

/** Container ids from 0 upwards onto the ranges in the order they are listed (as dockerd). */
export function mappingsFrom(ranges: readonly SubIdRange[]): IdMapping[] {
  let next = 0;
  return ranges.map((r) => {
    const m = { containerID: next, hostID: r.start, size: r.length };
    next += r.length;
    return m;
  });
}

/** Size of the range given to the default remap user, and where allocation starts (as dockerd). */
export const DEFAULT_RANGE_SIZE = 65536;
export const FIRST_SUBORDINATE_ID = 100000;

/** The first `size` ids at or above FIRST_SUBORDINATE_ID that no listed range overlaps. */
export function nextFreeRange(used: readonly SubIdRange[], size = DEFAULT_RANGE_SIZE): SubIdRange {
  let start = FIRST_SUBORDINATE_ID;
  for (const r of [...used].sort((a, b) => a.start - b.start)) {
    if (r.start + r.length <= start) continue;
    if (r.start >= start + size) break;
    start = r.start + r.length;
  }
  return { start, length: size };
}

/** --userns-remap's value split into its user and optional group parts (validated, not resolved). */
export function parseRemapSetting(value: string): { user: string; group?: string } {
  const parts = value.split(':');
  if (parts.length > 2 || parts.some((p) => p === ''))
    throw invalidParameter(`Invalid userns-remap value ${JSON.stringify(value)}: must be default, user[:group] or uid[:gid]`);
  const [user, group] = parts as [string, string?];
  for (const p of parts) {
    if (!/^[A-Za-z0-9_][A-Za-z0-9_.-]*\$?$/.test(p))
      throw invalidParameter(`Invalid userns-remap value ${JSON.stringify(value)}: ${JSON.stringify(p)} is not a user or group name or id`);
  }
  return group === undefined ? { user } : { user, group };
}

/** Whether a container gets the daemon's remapped user namespace (UsernsMode "host" opts out). */
export function usesRemap(usernsMode: string | undefined, remapOn: boolean): boolean {
  return remapOn && usernsMode !== 'host';
}

/**
 * HostConfig.UsernsMode is "" or "host"; with remapping on, a container in the remapped namespace
 * cannot be privileged nor share the host's network or PID namespace (dockerd's messages).
 */
export function checkUsernsMode(
  hc: { UsernsMode?: string; Privileged?: boolean; NetworkMode?: string; PidMode?: string },
  remapOn: boolean,
): void {
  const mode = hc.UsernsMode ?? '';
  if (mode !== '' && mode !== 'host') throw invalidParameter(`invalid USER mode: ${mode}`);
  if (!usesRemap(mode, remapOn)) return;
  if (hc.Privileged)
    throw invalidParameter(
      'privileged mode is incompatible with user namespaces.  You must run the container in the host namespace when running privileged mode',
    );
  if (hc.NetworkMode === 'host') throw invalidParameter("cannot share the host's network namespace when user namespaces are enabled");
  if (hc.PidMode === 'host') throw invalidParameter('cannot share the host PID namespace when user namespaces are enabled');
}
