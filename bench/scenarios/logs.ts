// A container writes 256 MiB to stdout in 100-byte lines (busybox yes | head -c): start → exit wall
// time, then the whole log read back through GET /containers/{id}/logs; and the floor: the same
// writer redirected to a file in the container's own filesystem (no log pipeline at all).

import { api, drain } from '../lib/http.ts';
import { cpuMeter } from '../lib/proc.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer, removeContainer } from './api-lifecycle.ts';

export const LOG_BYTES = 256 * 1024 * 1024;
const LINE = 'x'.repeat(99); // + '\n' = 100 bytes a line

export interface LogsRun {
  writeMs: number;
  readMs: number;
  readBytes: number;
  /** CPU ms the daemon used while the container wrote, and while the logs were read. */
  writeCpu: number;
  readCpu: number;
  /** The same writer to a file in the container (start → exit), ms. */
  floorMs: number;
}

/** The writer with its output going to a file in the container's writable layer, start → exit ms. */
async function floorOnce(d: DaemonUnderTest): Promise<number> {
  const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${LOG_BYTES} > /floor.out`], { NetworkMode: 'none' });
  try {
    const t0 = performance.now();
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    const w = await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    const ms = performance.now() - t0;
    if (w.json<{ StatusCode: number }>().StatusCode !== 0) throw new Error(`${d.kind}: floor writer failed`);
    return ms;
  } finally {
    await removeContainer(d, id).catch(() => undefined);
  }
}

export async function logsOnce(d: DaemonUnderTest): Promise<LogsRun> {
  const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${LOG_BYTES}`], {
    NetworkMode: 'none',
    LogConfig: { Type: 'json-file', Config: {} },
  });
  try {
    const pids = { daemon: d.pid, containerd: d.containerdPid() };
    const writeCpu = cpuMeter(pids);
    const t0 = performance.now();
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    const w = await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    const writeMs = performance.now() - t0;
    const status = w.json<{ StatusCode: number }>().StatusCode;
    if (status !== 0) throw new Error(`${d.kind}: log writer exited ${status}`);
    const writeCpuMs = writeCpu().daemon;
    const readCpu = cpuMeter(pids);
    const t1 = performance.now();
    const r = await drain(d.socket, `/containers/${id}/logs?stdout=1&stderr=1`);
    const readMs = performance.now() - t1;
    const readCpuMs = readCpu().daemon;
    if (r.status !== 200) throw new Error(`${d.kind}: GET logs → ${r.status}`);
    // Multiplexed stream: 8-byte frame headers on top of the payload.
    if (r.bytes < LOG_BYTES) throw new Error(`${d.kind}: logs returned ${r.bytes} bytes, expected ≥ ${LOG_BYTES}`);
    const floorMs = await floorOnce(d);
    return { writeMs, readMs, readBytes: r.bytes, writeCpu: writeCpuMs, readCpu: readCpuMs, floorMs };
  } finally {
    await removeContainer(d, id).catch(() => undefined);
  }
}
