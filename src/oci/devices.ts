// Device nodes for containers: the cgroup rules every container gets, and helpers that stat host
// device nodes (HostConfig.Devices, blkio throttling, privileged mode) so buildSpec can stay pure.

import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { invalidParameter } from '../errors.ts';
import type { DeviceMapping } from '../types/container-api.ts';
import type { OciDeviceCgroup, OciLinuxDevice } from './spec-types.ts';

/** A host device node resolved for a container (linux.devices entry + its cgroup permissions). */
export interface ResolvedDevice extends OciLinuxDevice {
  permissions: string;
}

/**
 * Device cgroup rules for an unprivileged container: deny everything, allow the usual character
 * devices, and allow mknod of any node (creating one is harmless; using it is what the rules gate).
 * /dev/fuse stays denied, as in Docker. Only allow rules follow the deny: runc's cgroup v1 emulation
 * cannot punch a deny hole into an earlier wildcard allow.
 */
export const DEFAULT_DEVICE_RULES: readonly OciDeviceCgroup[] = [
  { allow: false, access: 'rwm' },
  { allow: true, type: 'c', major: 1, minor: 3, access: 'rwm' }, // null
  { allow: true, type: 'c', major: 1, minor: 5, access: 'rwm' }, // zero
  { allow: true, type: 'c', major: 1, minor: 7, access: 'rwm' }, // full
  { allow: true, type: 'c', major: 1, minor: 8, access: 'rwm' }, // random
  { allow: true, type: 'c', major: 1, minor: 9, access: 'rwm' }, // urandom
  { allow: true, type: 'c', major: 5, minor: 0, access: 'rwm' }, // tty
  { allow: true, type: 'c', major: 5, minor: 1, access: 'rwm' }, // console
  { allow: true, type: 'c', major: 5, minor: 2, access: 'rwm' }, // ptmx
  { allow: true, type: 'c', major: 136, access: 'rwm' }, // pts/*
  { allow: true, type: 'c', major: 10, minor: 200, access: 'rwm' }, // net/tun
  { allow: true, type: 'c', access: 'm' },
  { allow: true, type: 'b', access: 'm' },
];

export const PRIVILEGED_DEVICE_RULES: readonly OciDeviceCgroup[] = [{ allow: true, access: 'rwm' }];

/** Splits a Linux dev_t (glibc encoding) into major and minor. */
export function splitDevT(rdev: bigint): { major: number; minor: number } {
  const major = ((rdev >> 8n) & 0xfffn) | ((rdev >> 32n) & ~0xfffn);
  const minor = (rdev & 0xffn) | ((rdev >> 12n) & ~0xffn);
  return { major: Number(major), minor: Number(minor) };
}

/** Major/minor of a block or character device node (follows symlinks). */
export function deviceNumbers(path: string): { major: number; minor: number; type: 'b' | 'c' } {
  const st = statSync(path, { bigint: true });
  if (!st.isBlockDevice() && !st.isCharacterDevice()) throw new Error(`${path} is not a device node`);
  return { ...splitDevT(st.rdev), type: st.isBlockDevice() ? 'b' : 'c' };
}

/** One device node → what buildSpec needs. `pathInContainer` defaults to the host path. */
export function resolveDevice(pathOnHost: string, pathInContainer = pathOnHost, permissions = 'rwm'): ResolvedDevice {
  let st;
  try {
    st = statSync(pathOnHost, { bigint: true });
  } catch (err) {
    throw invalidParameter(
      `error gathering device information while adding custom device ${JSON.stringify(pathOnHost)}: ${(err as Error).message}`,
    );
  }
  if (!st.isBlockDevice() && !st.isCharacterDevice()) {
    throw invalidParameter(
      `error gathering device information while adding custom device ${JSON.stringify(pathOnHost)}: not a device node`,
    );
  }
  return {
    path: pathInContainer,
    type: st.isBlockDevice() ? 'b' : 'c',
    ...splitDevT(st.rdev),
    fileMode: Number(st.mode & 0o7777n),
    uid: Number(st.uid),
    gid: Number(st.gid),
    permissions,
  };
}

/**
 * HostConfig.Devices → resolved devices. A directory on the host adds every device node below it,
 * mapped under PathInContainer (as dockerd does for e.g. `--device /dev/snd`).
 */
export function resolveDeviceMappings(mappings: readonly DeviceMapping[] | undefined): ResolvedDevice[] {
  const out: ResolvedDevice[] = [];
  for (const m of mappings ?? []) {
    const host = m.PathOnHost ?? '';
    const inContainer = m.PathInContainer || host;
    const perms = m.CgroupPermissions || 'rwm';
    let isDir = false;
    try {
      isDir = statSync(host).isDirectory();
    } catch {
      // ENOENT or EACCES: not a directory we can see; resolveDevice reports the error
    }
    if (!isDir) {
      out.push(resolveDevice(host, inContainer, perms));
      continue;
    }
    const found = walkDevices(host);
    if (found.length === 0) {
      throw invalidParameter(
        `error gathering device information while adding custom device ${JSON.stringify(host)}: no device nodes found`,
      );
    }
    for (const p of found) out.push(resolveDevice(p, inContainer + p.slice(host.length), perms));
  }
  return out;
}

function walkDevices(dir: string, skip: ReadonlySet<string> = new Set()): string[] {
  const out: string[] = [];
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    // ENOENT or ENOTDIR: no devices under it
    return out;
  }
  for (const e of entries) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (!skip.has(e.name)) out.push(...walkDevices(p, skip));
    } else if (e.isBlockDevice() || e.isCharacterDevice()) {
      out.push(p);
    }
  }
  return out;
}

/**
 * Every device node under /dev, for privileged containers. Skips what runc mounts itself (pts, shm,
 * mqueue) and /dev/console (runc sets it up for terminals).
 */
export function listHostDevices(root = '/dev'): ResolvedDevice[] {
  const skip = new Set(['pts', 'shm', 'fd', 'mqueue', '.lxc', '.lxd-mounts', '.udev']);
  const out: ResolvedDevice[] = [];
  for (const p of walkDevices(root, skip)) {
    if (p === join(root, 'console')) continue;
    try {
      if (lstatSync(p).isSymbolicLink()) continue;
      out.push(resolveDevice(p));
    } catch {
      // vanished or unreadable: not ours to fail on
    }
  }
  return out;
}

export function deviceCgroupRule(d: ResolvedDevice): OciDeviceCgroup {
  return { allow: true, type: d.type === 'b' ? 'b' : 'c', major: d.major, minor: d.minor, access: d.permissions };
}

const RULE = /^([acb]) ([0-9]+|\*):([0-9]+|\*) ([rwm]{1,3})$/;

/** A DeviceCgroupRules entry ("c 13:* rwm", or "a") → cgroup rule; throws on bad syntax. */
export function parseDeviceCgroupRule(rule: string): OciDeviceCgroup {
  if (rule === 'a') return { allow: true, type: 'a', access: 'rwm' };
  const m = RULE.exec(rule);
  if (!m) throw invalidParameter(`invalid device cgroup format '${rule}'`);
  const out: OciDeviceCgroup = { allow: true, type: m[1] as 'a' | 'b' | 'c', access: m[4]! };
  if (m[2] !== '*') out.major = Number(m[2]);
  if (m[3] !== '*') out.minor = Number(m[3]);
  return out;
}
