// Which sysctls a container may set: only those the kernel scopes to a namespace the container owns
// (runc's rule; dockerd leaves it to runc, we refuse at create with the same wording).

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
