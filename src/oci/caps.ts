// Linux capabilities: the names runc knows, Docker's default set, and the CapAdd/CapDrop arithmetic
// (same rules as dockerd: names with or without CAP_, case-insensitive, "ALL").

import { readFileSync } from 'node:fs';
import { invalidParameter } from '../errors.ts';

/** Every capability by bit number (index = bit). */
export const ALL_CAPABILITIES: readonly string[] = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_DAC_READ_SEARCH',
  'CAP_FOWNER',
  'CAP_FSETID',
  'CAP_KILL',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETPCAP',
  'CAP_LINUX_IMMUTABLE',
  'CAP_NET_BIND_SERVICE',
  'CAP_NET_BROADCAST',
  'CAP_NET_ADMIN',
  'CAP_NET_RAW',
  'CAP_IPC_LOCK',
  'CAP_IPC_OWNER',
  'CAP_SYS_MODULE',
  'CAP_SYS_RAWIO',
  'CAP_SYS_CHROOT',
  'CAP_SYS_PTRACE',
  'CAP_SYS_PACCT',
  'CAP_SYS_ADMIN',
  'CAP_SYS_BOOT',
  'CAP_SYS_NICE',
  'CAP_SYS_RESOURCE',
  'CAP_SYS_TIME',
  'CAP_SYS_TTY_CONFIG',
  'CAP_MKNOD',
  'CAP_LEASE',
  'CAP_AUDIT_WRITE',
  'CAP_AUDIT_CONTROL',
  'CAP_SETFCAP',
  'CAP_MAC_OVERRIDE',
  'CAP_MAC_ADMIN',
  'CAP_SYSLOG',
  'CAP_WAKE_ALARM',
  'CAP_BLOCK_SUSPEND',
  'CAP_AUDIT_READ',
  'CAP_PERFMON',
  'CAP_BPF',
  'CAP_CHECKPOINT_RESTORE',
];

/** Docker's default capability set (14 capabilities). */
export const DEFAULT_CAPABILITIES: readonly string[] = [
  'CAP_CHOWN',
  'CAP_DAC_OVERRIDE',
  'CAP_FSETID',
  'CAP_FOWNER',
  'CAP_MKNOD',
  'CAP_NET_RAW',
  'CAP_SETGID',
  'CAP_SETUID',
  'CAP_SETFCAP',
  'CAP_SETPCAP',
  'CAP_NET_BIND_SERVICE',
  'CAP_SYS_CHROOT',
  'CAP_KILL',
  'CAP_AUDIT_WRITE',
];

const KNOWN = new Set(ALL_CAPABILITIES);

/**
 * Upper-cases, adds the CAP_ prefix and checks each name; "ALL" passes through. Throws
 * `unknown capability: "CAP_X"` (dockerd's wording; the caller prefixes "invalid CapAdd: ").
 */
export function normalizeCapabilities(names: readonly string[]): string[] {
  const out: string[] = [];
  for (const raw of names) {
    let name = raw.toUpperCase();
    if (name === 'ALL') {
      out.push(name);
      continue;
    }
    if (!name.startsWith('CAP_')) name = `CAP_${name}`;
    if (!KNOWN.has(name)) throw invalidParameter(`unknown capability: ${JSON.stringify(name)}`);
    out.push(name);
  }
  return out;
}

export interface CapabilityRequest {
  capAdd?: readonly string[];
  capDrop?: readonly string[];
  privileged?: boolean;
  /** All capabilities available (e.g. the daemon's own permitted set); defaults to ALL_CAPABILITIES. */
  available?: readonly string[];
}

/**
 * The container's capability list. Privileged → everything available. CapAdd ALL → everything but
 * CapDrop; CapDrop ALL → exactly CapAdd; otherwise defaults − CapDrop + CapAdd. The result is
 * limited to `available`, because runc cannot grant a capability its caller does not hold.
 */
export function resolveCapabilities(req: CapabilityRequest): string[] {
  const available = req.available ?? ALL_CAPABILITIES;
  const everything = ALL_CAPABILITIES.filter((c) => available.includes(c));
  if (req.privileged) return everything;
  const adds = normalizeCapabilities(req.capAdd ?? []);
  const drops = normalizeCapabilities(req.capDrop ?? []);
  let caps: string[];
  if (adds.includes('ALL')) {
    caps = everything.filter((c) => !drops.includes(c));
  } else if (drops.includes('ALL')) {
    caps = adds;
  } else {
    caps = DEFAULT_CAPABILITIES.filter((c) => !drops.includes(c));
    caps.push(...adds);
  }
  return [...new Set(caps)].filter((c) => available.includes(c));
}

/** Capability names for the bits set in a /proc/<pid>/status Cap* hex mask. */
export function capabilitiesFromMask(hexMask: string): string[] {
  const mask = BigInt(`0x${hexMask.trim()}`);
  return ALL_CAPABILITIES.filter((_, bit) => (mask >> BigInt(bit)) & 1n);
}

/** The hex mask (as in /proc/<pid>/status) for a list of capability names. */
export function capabilityMask(names: readonly string[]): string {
  let mask = 0n;
  for (const name of names) {
    const bit = ALL_CAPABILITIES.indexOf(name);
    if (bit >= 0) mask |= 1n << BigInt(bit);
  }
  return mask.toString(16).padStart(16, '0');
}

/** The capabilities this process holds (CapEff of /proc/self/status): what runc can pass on. */
export function readOwnCapabilities(statusText: string = readFileSync('/proc/self/status', 'utf8')): string[] {
  const m = /^CapEff:\s*([0-9a-f]+)$/m.exec(statusText);
  return m ? capabilitiesFromMask(m[1]!) : [...ALL_CAPABILITIES];
}
