// The X-Docker-Container-Path-Stat header: base64 of {name, size, mode, mtime, linkTarget} with the
// mode in Go's os.FileMode bits (type bits high, permissions low) and mtime as Go's RFC 3339 text.
import type { BigIntStats } from 'node:fs';
import type { ContainerPathStat } from '../../types/archive.ts';

const GO = {
  dir: 2 ** 31,
  symlink: 2 ** 27,
  device: 2 ** 26,
  namedPipe: 2 ** 25,
  socket: 2 ** 24,
  setuid: 2 ** 23,
  setgid: 2 ** 22,
  charDevice: 2 ** 21,
  sticky: 2 ** 20,
};

const S_IFMT = 0o170000;

/** Unix st_mode → Go FileMode. */
export function goFileMode(mode: number): number {
  let m = mode & 0o777;
  switch (mode & S_IFMT) {
    case 0o040000:
      m += GO.dir;
      break;
    case 0o120000:
      m += GO.symlink;
      break;
    case 0o010000:
      m += GO.namedPipe;
      break;
    case 0o140000:
      m += GO.socket;
      break;
    case 0o020000:
      m += GO.device + GO.charDevice;
      break;
    case 0o060000:
      m += GO.device;
      break;
  }
  if (mode & 0o4000) m += GO.setuid;
  if (mode & 0o2000) m += GO.setgid;
  if (mode & 0o1000) m += GO.sticky;
  return m;
}

/** Go's time.Time JSON (RFC 3339 with nanoseconds, trailing zeros dropped) in UTC. */
export function goTime(ns: bigint): string {
  const secs = ns / 1_000_000_000n;
  const frac = (ns % 1_000_000_000n).toString().padStart(9, '0').replace(/0+$/, '');
  return `${new Date(Number(secs) * 1000).toISOString().slice(0, 19)}${frac ? `.${frac}` : ''}Z`;
}

export function pathStat(name: string, st: BigIntStats, linkTarget: string): ContainerPathStat {
  return { name, size: Number(st.size), mode: goFileMode(Number(st.mode)), mtime: goTime(st.mtimeNs), linkTarget };
}

export function encodePathStat(s: ContainerPathStat): string {
  return Buffer.from(JSON.stringify(s)).toString('base64');
}
