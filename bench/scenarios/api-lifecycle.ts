// One container through a daemon's HTTP API: create → start → wait → delete, each call timed.

import { api } from '../lib/http.ts';
import { cpuMeter } from '../lib/proc.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';

export interface ApiPhases {
  create: number;
  start: number;
  wait: number;
  delete: number;
  total: number;
  /** CPU ms the daemon and its containerd used meanwhile (10 ms ticks: average over many). */
  cpu: { daemon: number; containerd: number };
}

export const NETWORK_NONE = { NetworkMode: 'none' };

let seq = 0;

/**
 * Always with an explicit unique name: engined's generated names can collide between concurrent
 * creates (409 from the store), which dockerd avoids by reserving the name up front.
 */
export async function createContainer(
  d: DaemonUnderTest,
  cmd: string[],
  hostConfig: Record<string, unknown> = NETWORK_NONE,
): Promise<string> {
  const name = `bench-${process.pid}-${seq++}`;
  const r = await api(d.socket, 'POST', `/containers/create?name=${name}`, { Image: 'busybox', Cmd: cmd, HostConfig: hostConfig }, [201]);
  return r.json<{ Id: string }>().Id;
}

export async function removeContainer(d: DaemonUnderTest, id: string): Promise<void> {
  await api(d.socket, 'DELETE', `/containers/${id}`, undefined, [204]);
}

/** `true` in busybox, start to removal; throws on a non-zero exit. */
export async function apiLifecycle(d: DaemonUnderTest, hostConfig: Record<string, unknown> = NETWORK_NONE): Promise<ApiPhases> {
  const cpu = cpuMeter({ daemon: d.pid, containerd: d.containerdPid() });
  const t0 = performance.now();
  const id = await createContainer(d, ['true'], hostConfig);
  const t1 = performance.now();
  await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
  const t2 = performance.now();
  const w = await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
  const t3 = performance.now();
  const status = w.json<{ StatusCode: number }>().StatusCode;
  if (status !== 0) throw new Error(`${d.kind}: container ${id} exited ${status}`);
  await removeContainer(d, id);
  const t4 = performance.now();
  return { create: t1 - t0, start: t2 - t1, wait: t3 - t2, delete: t4 - t3, total: t4 - t0, cpu: cpu() };
}
