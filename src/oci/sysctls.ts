// Which sysctls a container may set: only those the kernel scopes to a namespace the container owns
// (runc's rule; dockerd leaves it to runc, we refuse at create with the same wording); and which of
// the network sysctls dockerd sets by default this host can take.

import { existsSync, readFileSync } from 'node:fs';
import { invalidParameter } from '../errors.ts';

const IPC_SYSCTLS = new Set([
  'kernel.msgmax',
  'kernel.msgmnb',
  'kernel.msgmni',
  'kernel.sem',
  'kernel.shmall',
  'kernel.shmmax',
  'kernel.shmmni',
  'kernel.shm_rmid_forced',
]);

export interface NamespaceModes {
  ipcMode?: string;
  networkMode?: string;
  utsMode?: string;
}

/** Throws invalidParameter for a sysctl that is not namespaced or whose namespace is the host's. */
export function validateSysctl(name: string, modes: NamespaceModes): void {
  const quoted = JSON.stringify(name);
  if (IPC_SYSCTLS.has(name) || name.startsWith('fs.mqueue.')) {
    // A joined IPC namespace (container:<id>) is still a container's, so the sysctl is allowed.
    if (modes.ipcMode === 'host') throw invalidParameter(`sysctl ${quoted} is not allowed in the hosts ipc namespace`);
    return;
  }
  if (name.startsWith('net.')) {
    if (modes.networkMode === 'host') throw invalidParameter(`sysctl ${quoted} is not allowed in the hosts network namespace`);
    return;
  }
  if (name === 'kernel.domainname' && modes.utsMode !== 'host') return;
  if (name === 'kernel.hostname' && modes.utsMode !== 'host') {
    throw invalidParameter(`sysctl ${quoted} is not allowed as it conflicts with the OCI "hostname" field`);
  }
  throw invalidParameter(`sysctl ${quoted} is not in a separate kernel namespace`);
}

export function validateSysctls(sysctls: Record<string, string> | undefined, modes: NamespaceModes): void {
  for (const name of Object.keys(sysctls ?? {})) validateSysctl(name, modes);
}

/**
 * Whether this process runs inside a user namespace (rootless): its uid_map is not the whole
 * identity range (as Go's userns.RunningInUserNS). An unreadable map counts as the host's.
 */
export function runningInUserNamespace(uidMap = '/proc/self/uid_map'): boolean {
  let text: string;
  try {
    text = readFileSync(uidMap, 'utf8');
  } catch {
    return false; // no /proc/self/uid_map: a kernel without user namespaces
  }
  const fields = text.trim().split(/\s+/);
  return !(fields.length === 3 && fields[0] === '0' && fields[1] === '0' && fields[2] === '4294967295');
}

/**
 * The default network sysctls (net.ipv4.ping_group_range, net.ipv4.ip_unprivileged_port_start)
 * this host can take: each needs its file under /proc/sys (a kernel that has it), and ping sockets
 * cannot be set up from inside a user namespace.
 */
export function hostNetSysctls(
  procSys = '/proc/sys',
  inUserNamespace = runningInUserNamespace(),
): {
  pingGroupRange: boolean;
  unprivilegedPortStart: boolean;
} {
  return {
    pingGroupRange: !inUserNamespace && existsSync(`${procSys}/net/ipv4/ping_group_range`),
    unprivilegedPortStart: existsSync(`${procSys}/net/ipv4/ip_unprivileged_port_start`),
  };
}
