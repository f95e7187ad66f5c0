// Exec round trip through the API in a running busybox `sleep` container: POST /containers/{id}/exec
// → POST /exec/{id}/start as a hijacked request (read until the daemon closes) → GET /exec/{id}/json.

import { connect } from 'node:net';
import { api } from '../lib/http.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer } from './api-lifecycle.ts';

/** Starts a `sleep` container to exec into; the returned function removes it (force). */
export async function sleeper(d: DaemonUnderTest): Promise<{ id: string; remove: () => Promise<void> }> {
  const id = await createContainer(d, ['sleep', '3600']);
  await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
  return { id, remove: () => api(d.socket, 'DELETE', `/containers/${id}?force=1`, undefined, [204]).then(() => undefined) };
}

/** POSTs `body` with Upgrade: tcp on a connection of its own; resolves with the raw bytes once the daemon closes it. */
function hijack(socket: string, path: string, body: unknown): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const s = connect(socket);
    const chunks: Buffer[] = [];
    const json = JSON.stringify(body);
    s.on('data', (c: Buffer) => chunks.push(c));
    s.on('end', () => resolve(Buffer.concat(chunks)));
    s.on('error', reject);
    s.setTimeout(60_000, () => s.destroy(new Error(`POST ${path} timed out`)));
    s.write(
      `POST ${path} HTTP/1.1\r\nHost: engine\r\nConnection: Upgrade\r\nUpgrade: tcp\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(json)}\r\n\r\n${json}`,
    );
  });
}

/** One exec of `true` in container `id`, ms; throws unless the start was upgraded (101) and the exit code is 0. */
export async function execTrue(d: DaemonUnderTest, id: string): Promise<number> {
  const t0 = performance.now();
  const e = await api(d.socket, 'POST', `/containers/${id}/exec`, { Cmd: ['true'], AttachStdout: true, AttachStderr: true }, [201]);
  const execId = e.json<{ Id: string }>().Id;
  const raw = await hijack(d.socket, `/exec/${execId}/start`, { Detach: false, Tty: false });
  const status = /^HTTP\/1\.[01] (\d{3})/.exec(raw.subarray(0, 32).toString('latin1'))?.[1];
  if (status !== '101' && status !== '200')
    throw new Error(`${d.kind}: exec start → ${status ?? 'no status'}: ${raw.subarray(0, 300).toString()}`);
  const info = (await api(d.socket, 'GET', `/exec/${execId}/json`, undefined, [200])).json<{ ExitCode: number | null; Running: boolean }>();
  const ms = performance.now() - t0;
  if (info.Running || info.ExitCode !== 0) throw new Error(`${d.kind}: exec exit ${info.ExitCode} (running ${info.Running})`);
  return ms;
}
