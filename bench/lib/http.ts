// Raw HTTP over a daemon's unix socket: request/response with a status check, and a streaming GET
// that only counts bytes (a 256 MiB log must not be buffered).

import { connect } from 'node:net';
import { httpOverUnix, type HttpResult } from '../../test/helpers/daemon.ts';

export async function api(
  socket: string,
  method: string,
  path: string,
  body?: unknown,
  expect: number[] = [200, 201, 204],
): Promise<HttpResult> {
  const r = await httpOverUnix(socket, method, path, { ...(body === undefined ? {} : { body }), timeoutMs: 300_000 });
  if (!expect.includes(r.status)) throw new Error(`${method} ${path} → ${r.status}: ${r.text().slice(0, 500)}`);
  return r;
}

/**
 * GETs `path` on a connection of its own (Connection: close) and reads to EOF, counting bytes on the
 * wire. A raw socket, not node:http: its per-chunk parsing costs ~1.5× on a stream of 2.7 million
 * small frames and would be measured as the daemon's time. Read into one reused 1 MiB buffer
 * (`onread`): with a fresh 64 KiB buffer per read the reader took 260-410 ms of CPU per 276 MiB at
 * load 20-25, now 60-75 ms (curl -o /dev/null: 70-110 ms), CPU the daemon under test then lacks.
 */
export function drain(socket: string, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    let bytes = 0;
    let head = '';
    const s = connect({
      path: socket,
      onread: {
        buffer: Buffer.allocUnsafe(1024 * 1024),
        callback: (n: number, buf: Uint8Array) => {
          if (head.length < 16) head += Buffer.from(buf.buffer, buf.byteOffset, Math.min(n, 16)).toString('latin1');
          bytes += n;
          return true;
        },
      },
    });
    s.on('end', () => {
      const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head)?.[1] ?? 0);
      resolve({ status, bytes });
    });
    s.on('error', reject);
    s.setTimeout(600_000, () => s.destroy(new Error(`GET ${path} timed out`)));
    s.write(`GET ${path} HTTP/1.1\r\nHost: engine\r\nConnection: close\r\n\r\n`);
  });
}
