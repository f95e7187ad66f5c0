// Pieces of a node's cluster life that need no ClusterService state: the Description it advertises,
// a new manager's request to become an etcd voter, and fetching the current autolock key from the
// other managers; asking another manager for this node's role; removing a leaving node's task
// containers; small address and availability checks.
import type { NodeFacts } from '../agent/task-template.ts';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { arch, cpus, hostname, totalmem } from 'node:os';
import type { GenericResource } from '../../config/generic-resources.ts';
import type { Logger } from '../../util/log.ts';
import { kekId, kekOf, parseUnlockKey } from '../ca/autolock.ts';
import { tlsInfoOf } from '../ca/ca.ts';
import { invalidParameter } from '../../errors.ts';
import { parseAddr } from './addresses.ts';
import { callManager, type HeartbeatResponse } from './endpoint.ts';
import type { LocalClusterState, LocalStateFiles, NodeCerts, RemoteManager } from './local-state.ts';
import type { TaskRuntime } from '../agent/task-runtime.ts';
import type { NodeRecord } from '../manager/nodes.ts';

/** The node's Description: host, platform, resources, engine labels and the cluster's TLS info. */
/** What this node's description says of it, for templates (task-template.ts). */
export function nodeFacts(): NodeFacts {
  return { hostname: hostname(), os: 'linux', architecture: arch() === 'x64' ? 'x86_64' : arch() === 'arm64' ? 'aarch64' : arch() };
}

export function describeNode(
  deps: { genericResources?: () => GenericResource[]; engineLabels: () => string[]; engineVersion: string },
  caPem: string,
): NodeRecord['Description'] {
  const generic = deps.genericResources?.() ?? [];
  const labels: Record<string, string> = {};
  for (const l of deps.engineLabels()) {
    const i = l.indexOf('=');
    labels[i < 0 ? l : l.slice(0, i)] = i < 0 ? '' : l.slice(i + 1);
  }
  return {
    Hostname: hostname(),
    Platform: { Architecture: nodeFacts().architecture, OS: 'linux' },
    Resources: { NanoCPUs: cpus().length * 1e9, MemoryBytes: totalmem(), ...(generic.length ? { GenericResources: generic } : {}) },
    Engine: { EngineVersion: deps.engineVersion, Labels: labels, Plugins: [] },
    TLSInfo: tlsInfoOf(caPem),
  };
}

/** A joining or promoted manager's etcd learner asks a manager to make it a voter, until it may. */
export async function askToPromote(managers: RemoteManager[], certs: NodeCerts, log: Logger): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (let i = 0; ; i++) {
    const addr = managers[i % managers.length]!.Addr;
    try {
      return await callManager<void>(addr, 'POST', '/promote', {}, { caPem: certs.caPem, certs });
    } catch (err) {
      if (Date.now() > deadline) throw err;
      log.debug('etcd promotion not yet possible', { manager: addr, error: (err as Error).message });
      await new Promise((r) => setTimeout(r, 500));
    }
  }
}

/** The unlock key whose KEK has the ID `want`, from the first other manager that holds it; null if none does. */
export async function fetchUnlockKey(managers: RemoteManager[], certs: NodeCerts, want: string, log: Logger): Promise<Buffer | null> {
  for (const peer of managers) {
    try {
      const r = await callManager<{ UnlockKey: string }>(
        peer.Addr,
        'POST',
        '/unlock-key',
        {},
        { caPem: certs.caPem, certs, timeoutMs: 5000 },
      );
      const key = parseUnlockKey(r.UnlockKey);
      if (kekId(kekOf(key)) === want) return key;
    } catch (err) {
      log.debug('fetching the unlock key from a manager failed', { manager: peer.Addr, error: (err as Error).message });
    }
  }
  return null;
}

/** Another manager's heartbeat answer for this node (its role as the store has it), or null. */
export async function askRole(
  state: LocalClusterState,
  managers: RemoteManager[],
  certs: NodeCerts,
  log: Logger,
): Promise<HeartbeatResponse | null> {
  for (const peer of managers.filter((m) => m.NodeID !== state.nodeId)) {
    try {
      return await callManager<HeartbeatResponse>(peer.Addr, 'POST', '/heartbeat', {}, { caPem: certs.caPem, certs, timeoutMs: 5000 });
    } catch (err) {
      log.debug('role check with a manager failed', { manager: peer.Addr, error: (err as Error).message });
    }
  }
  return null;
}

/** A node leaving the cluster removes its task containers (as dockerd); one that cannot go keeps no other. */
export async function removeTaskContainers(rt: TaskRuntime | undefined, log: Logger): Promise<void> {
  if (!rt) return;
  try {
    for (const c of await rt.list()) {
      await rt
        .remove(c.id)
        .then(() => rt.removeFiles(c.taskId))
        .catch((err: Error) =>
          log.warn('cannot remove a task container of a node leaving the cluster', { task: c.taskId, error: err.message }),
        );
    }
  } catch (err) {
    log.warn('cannot list the task containers of a node leaving the cluster', { error: (err as Error).message });
  }
}

/** The node's VXLAN tunnel end: its data-path address, else its advertise address. */
export function vtepOf(st: LocalClusterState): string {
  return st.dataPathAddr || parseAddr(st.advertiseAddr, 0, 'advertise address').host;
}

export function checkAvailability(a: string): string {
  if (a !== 'active' && a !== 'pause' && a !== 'drain')
    throw invalidParameter(`invalid Availability ${JSON.stringify(a)}: must be "active", "pause" or "drain"`);
  return a;
}

/** Whether a certificate (the first of a chain) is for the public half of `keyPem`. */
export function certFitsKey(certPem: string, keyPem: string): boolean {
  return new X509Certificate(certPem).checkPrivateKey(createPrivateKey(keyPem));
}

/** Fetches the unlock key of `want` from one of `managers` and seals the node key with it. */
export async function holdUnlockKey(files: LocalStateFiles, managers: RemoteManager[], want: string, log: Logger): Promise<boolean> {
  const key = await fetchUnlockKey(managers, files.readCerts(), want, log);
  if (!key) return false; // the heartbeat's key check tries again
  files.rekey(key);
  log.info('autolock: the current unlock key fetched from a manager; the node key is sealed with it');
  return true;
}
