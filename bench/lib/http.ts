// Raw HTTP over a daemon's unix socket: request/response with a status check, and a streaming GET
// that only counts bytes (a 256 MiB log must not be buffered).

import { request as httpRequest } from 'node:http';
import { httpOverUnix, type HttpResult } from '../../test/helpers/daemon.ts';

export async function api(socket: string, method: string, path: string, body?: unknown, expect: number[] = [200, 201, 204]): Promise<HttpResult> {
  const r = await httpOverUnix(socket, method, path, { ...(body === undefined ? {} : { body }), timeoutMs: 300_000 });
  if (!expect.includes(r.status)) throw new Error(`${method} ${path} → ${r.status}: ${r.text().slice(0, 500)}`);
  return r;
}

/** GETs `path` and consumes the whole body; resolves with the byte count once it ends. */
export function drain(socket: string, path: string): Promise<{ status: number; bytes: number }> {
  return new Promise((resolve, reject) => {
    const req = httpRequest({ socketPath: socket, method: 'GET', path, timeout: 600_000 }, (res) => {
      let bytes = 0;
      res.on('data', (c: Buffer) => (bytes += c.length));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, bytes }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`GET ${path} timed out`)));
    req.on('error', reject);
    req.end();
  });
}
