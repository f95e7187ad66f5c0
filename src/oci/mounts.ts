// Mount lists for the spec: the filesystems every container gets, tmpfs option handling, and the
// ordering rule (a mount must come after the mount that contains its destination).

import { posix } from 'node:path';
import { invalidParameter } from '../errors.ts';
import type { MountSpec } from '../types/container-api.ts';
import type { OciMount } from './spec-types.ts';

/**
 * A bind or tmpfs mount the caller resolved from Binds / Mounts / volumes. Bind options are the
 * mode words ("ro", propagation; "bind" for non-recursive); tmpfs options come from
 * tmpfsMountOptions() (which adds Docker's noexec,nosuid,nodev defaults).
 */
export interface ResolvedMount {
  type: 'bind' | 'tmpfs';
  /** Host path for binds; ignored for tmpfs. */
  source: string;
  destination: string;
  options: string[];
}

export const PROPAGATIONS = ['private', 'rprivate', 'shared', 'rshared', 'slave', 'rslave'] as const;

export function cleanPath(p: string): string {
  return posix.normalize(p).replace(/(.)\/+$/, '$1');
}

export function pathDepth(p: string): number {
  const c = cleanPath(p);
  return c === '/' ? 0 : c.split('/').length - 1;
}

/** Stable sort by destination depth, so parents come before children. */
export function sortMounts<T extends { destination: string }>(mounts: readonly T[]): T[] {
  return mounts
    .map((m, i) => ({ m, i, d: pathDepth(m.destination) }))
    .sort((a, b) => a.d - b.d || a.i - b.i)
    .map((x) => x.m);
}

/** The kernel filesystems every container gets (before IPC and privilege adjustments). */
export function baseMounts(): OciMount[] {
  return [
    { destination: '/proc', type: 'proc', source: 'proc', options: ['nosuid', 'noexec', 'nodev'] },
    { destination: '/dev', type: 'tmpfs', source: 'tmpfs', options: ['nosuid', 'strictatime', 'mode=755', 'size=65536k'] },
    {
      destination: '/dev/pts',
      type: 'devpts',
      source: 'devpts',
      options: ['nosuid', 'noexec', 'newinstance', 'ptmxmode=0666', 'mode=0620', 'gid=5'],
    },
    { destination: '/sys', type: 'sysfs', source: 'sysfs', options: ['nosuid', 'noexec', 'nodev', 'ro'] },
    { destination: '/sys/fs/cgroup', type: 'cgroup', source: 'cgroup', options: ['ro', 'nosuid', 'noexec', 'nodev'] },
    { destination: '/dev/mqueue', type: 'mqueue', source: 'mqueue', options: ['nosuid', 'noexec', 'nodev'] },
  ];
}

export function shmTmpfs(sizeBytes: number): OciMount {
  return {
    destination: '/dev/shm',
    type: 'tmpfs',
    source: 'shm',
    options: ['nosuid', 'noexec', 'nodev', 'mode=1777', `size=${sizeBytes}`],
  };
}

const FLAG_OPPOSITES: Readonly<Record<string, string>> = {
  exec: 'noexec',
  noexec: 'exec',
  suid: 'nosuid',
  nosuid: 'suid',
  dev: 'nodev',
  nodev: 'dev',
  ro: 'rw',
  rw: 'ro',
  atime: 'noatime',
  noatime: 'atime',
  diratime: 'nodiratime',
  nodiratime: 'diratime',
};

/**
 * Merges tmpfs options: later options win; a flag replaces its opposite (exec vs noexec), key=value
 * replaces the same key. Order: surviving defaults first, then the user's.
 */
export function mergeTmpfsOptions(defaults: readonly string[], user: readonly string[]): string[] {
  const out: string[] = [];
  const key = (o: string) => (o.includes('=') ? o.slice(0, o.indexOf('=')) : o);
  for (const opt of [...defaults, ...user]) {
    if (opt === '') continue;
    const k = key(opt);
    const opposite = FLAG_OPPOSITES[opt];
    for (let i = out.length - 1; i >= 0; i--) {
      const o = out[i]!;
      if (key(o) === k || (opposite !== undefined && o === opposite)) out.splice(i, 1);
    }
    out.push(opt);
  }
  return out;
}

/** HostConfig.Tmpfs entry ("/run": "rw,noexec,size=65536k") → OCI mount with Docker's defaults. */
export function tmpfsFromMap(destination: string, options: string): OciMount {
  return {
    destination: cleanPath(destination),
    type: 'tmpfs',
    source: 'tmpfs',
    options: mergeTmpfsOptions(
      ['noexec', 'nosuid', 'nodev'],
      options.split(',').map((o) => o.trim()),
    ),
  };
}

/** size in bytes → "Ng" / "Nm" / "Nk" when exact (what dockerd writes). */
function sizeOption(bytes: number): string {
  for (const [suffix, div] of [
    ['g', 1 << 30],
    ['m', 1 << 20],
    ['k', 1 << 10],
  ] as const) {
    if (bytes % div === 0) return `size=${bytes / div}${suffix}`;
  }
  return `size=${bytes}`;
}

/** Options for a HostConfig.Mounts entry of type tmpfs (validated: only exec/noexec extra options). */
export function tmpfsMountOptions(m: MountSpec): string[] {
  const raw: string[] = [];
  if (m.ReadOnly) raw.push('ro');
  const t = m.TmpfsOptions;
  if (t?.Mode) raw.push(`mode=${t.Mode.toString(8)}`);
  if (t?.SizeBytes) raw.push(sizeOption(t.SizeBytes));
  for (const opt of t?.Options ?? []) {
    if (!Array.isArray(opt) || opt.length < 1 || opt.length > 2)
      throw invalidParameter('invalid mount config for type "tmpfs": invalid option array length');
    if (opt[0] !== 'exec' && opt[0] !== 'noexec')
      throw invalidParameter(`invalid mount config for type "tmpfs": invalid option: ${opt[0]}`);
    raw.push(opt.length === 1 ? opt[0] : `${opt[0]}=${opt[1]}`);
  }
  return mergeTmpfsOptions(['noexec', 'nosuid', 'nodev'], raw);
}

/** A caller mount → OCI mount: binds get rbind (unless bind given) and rprivate (unless set). */
export function toOciMount(m: ResolvedMount): OciMount {
  const destination = cleanPath(m.destination);
  if (m.type === 'tmpfs') return { destination, type: 'tmpfs', source: 'tmpfs', options: [...m.options] };
  const options = [...m.options];
  if (!options.includes('bind') && !options.includes('rbind')) options.unshift('rbind');
  if (!options.some((o) => (PROPAGATIONS as readonly string[]).includes(o))) options.push('rprivate');
  return { destination, type: 'bind', source: m.source, options };
}
