// Ulimits → OCI rlimits, and the check against the daemon's own hard limits.
//
// Host quirk: the daemon has no CAP_SYS_RESOURCE, so a container rlimit whose hard value is above the
// daemon's hard limit makes runc fail at start with "setrlimit: Operation not permitted". We therefore
// (a) emit no rlimits at all unless default-ulimits or the container ask (they are then inherited) and
// (b) refuse such a request up front with a message that says why.

import { readFileSync } from 'node:fs';
import { invalidParameter } from '../errors.ts';
import type { Ulimit } from '../types/container-api.ts';
import type { OciRlimit } from './spec-types.ts';

/** Docker's ulimit names → the RLIMIT_ resource. */
export const ULIMIT_RESOURCES: Readonly<Record<string, string>> = {
  as: 'RLIMIT_AS',
  core: 'RLIMIT_CORE',
  cpu: 'RLIMIT_CPU',
  data: 'RLIMIT_DATA',
  fsize: 'RLIMIT_FSIZE',
  locks: 'RLIMIT_LOCKS',
  memlock: 'RLIMIT_MEMLOCK',
  msgqueue: 'RLIMIT_MSGQUEUE',
  nice: 'RLIMIT_NICE',
  nofile: 'RLIMIT_NOFILE',
  nproc: 'RLIMIT_NPROC',
  rss: 'RLIMIT_RSS',
  rtprio: 'RLIMIT_RTPRIO',
  rttime: 'RLIMIT_RTTIME',
  sigpending: 'RLIMIT_SIGPENDING',
  stack: 'RLIMIT_STACK',
};

export const RLIM_INFINITY = (1n << 64n) - 1n;

/** A wire value (int64, -1 or any negative = unlimited) as the uint64 runc expects. */
export function rlimitValue(value: number): bigint {
  return value < 0 ? RLIM_INFINITY : BigInt(value);
}

/**
 * The rlimits for a container: daemon defaults, overridden per name by the container's Ulimits.
 * With neither, the result is empty — the container inherits the daemon's limits (see above).
 */
export function mergeUlimits(defaults: readonly Ulimit[], container: readonly Ulimit[] | undefined): Ulimit[] {
  const byName = new Map<string, Ulimit>();
  for (const u of defaults) byName.set(u.Name, u);
  for (const u of container ?? []) byName.set(u.Name, u);
  return [...byName.values()];
}

export function toRlimits(ulimits: readonly Ulimit[]): OciRlimit[] {
  return ulimits.map((u) => {
    const type = ULIMIT_RESOURCES[u.Name];
    if (!type) throw invalidParameter(`invalid ulimit type: ${u.Name}`);
    return { type, soft: rlimitValue(u.Soft), hard: rlimitValue(u.Hard) };
  });
}

/** Hard limits by ulimit name; RLIM_INFINITY for "unlimited". */
export type HardLimits = Record<string, bigint>;

const LIMITS_ROWS: Readonly<Record<string, string>> = {
  'Max cpu time': 'cpu',
  'Max file size': 'fsize',
  'Max data size': 'data',
  'Max stack size': 'stack',
  'Max core file size': 'core',
  'Max resident set': 'rss',
  'Max processes': 'nproc',
  'Max open files': 'nofile',
  'Max locked memory': 'memlock',
  'Max address space': 'as',
  'Max file locks': 'locks',
  'Max pending signals': 'sigpending',
  'Max msgqueue size': 'msgqueue',
  'Max nice priority': 'nice',
  'Max realtime priority': 'rtprio',
  'Max realtime timeout': 'rttime',
};

/** Parses the text of /proc/<pid>/limits. */
export function parseProcLimits(text: string): HardLimits {
  const out: HardLimits = {};
  for (const line of text.split('\n')) {
    const m = /^(Max [a-z ]+?)\s{2,}(\S+)\s+(\S+)/.exec(line);
    if (!m) continue;
    const name = LIMITS_ROWS[m[1]!];
    if (!name) continue;
    out[name] = m[3] === 'unlimited' ? RLIM_INFINITY : BigInt(m[3]!);
  }
  return out;
}

/** The daemon's own hard limits (read once per call; cheap). */
export function readDaemonHardLimits(): HardLimits {
  return parseProcLimits(readFileSync('/proc/self/limits', 'utf8'));
}

const show = (v: bigint) => (v === RLIM_INFINITY ? 'unlimited' : v.toString());

/**
 * Throws invalidParameter when a requested hard limit is above the daemon's own hard limit and the
 * daemon cannot raise limits (no CAP_SYS_RESOURCE). `canRaise` = the daemon holds CAP_SYS_RESOURCE.
 */
export function checkUlimits(ulimits: readonly Ulimit[], hardLimits: HardLimits, canRaise = false): void {
  if (canRaise) return;
  for (const u of ulimits) {
    const daemonHard = hardLimits[u.Name];
    if (daemonHard === undefined) continue;
    const wanted = rlimitValue(u.Hard);
    if (wanted > daemonHard) {
      throw invalidParameter(
        `ulimit ${u.Name}: hard limit ${show(wanted)} is above the daemon's own hard limit ${show(daemonHard)}, ` +
          `and the daemon lacks CAP_SYS_RESOURCE to raise it`,
      );
    }
  }
}
