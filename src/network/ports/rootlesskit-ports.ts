// Rootless mode: a published port must also be opened on the real host, outside rootlesskit's
// network namespace. rootlesskit's port driver does it through its API socket
// ($ROOTLESSKIT_STATE_DIR/api.sock): POST /v1/ports with {proto, parentIP, parentPort, childPort}
// makes the parent listen and forward each connection to the same port in our namespace (where the
// proxy or DNAT of port-publisher.ts takes it to the container); DELETE /v1/ports/<id> undoes it.
import { request } from 'node:http';
import { join } from 'node:path';
import type { ProxyHandle } from './proxy.ts';

interface PortSpec {
  proto: string;
  parentIP: string;
  parentPort: number;
  childPort: number;
}

interface PortStatus {
  id: number;
  spec: PortSpec;
}

function call<T>(socketPath: string, method: string, path: string, body?: unknown): Promise<T> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
    const req = request(
      {
        socketPath,
        method,
        path,
        timeout: 10_000,
        headers: payload ? { 'Content-Type': 'application/json', 'Content-Length': String(payload.length) } : {},
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          if ((res.statusCode ?? 500) >= 300) {
            let message = text.trim();
            try {
              message = (JSON.parse(text) as { message?: string }).message ?? message;
            } catch {
              // not JSON: the text as it is
            }
            reject(new Error(`rootlesskit ${method} ${path}: ${res.statusCode} ${message}`));
            return;
          }
          try {
            resolve((text ? JSON.parse(text) : undefined) as T);
          } catch (err) {
            reject(new Error(`rootlesskit ${method} ${path}: bad answer ${JSON.stringify(text.slice(0, 200))}`, { cause: err }));
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`rootlesskit ${method} ${path} timed out`)));
    req.on('error', reject);
    req.end(payload);
  });
}

/** Opens published ports on the parent (host) side of rootlesskit. */
export class RootlesskitPorts {
  private readonly socket: string;

  constructor(stateDir: string) {
    this.socket = join(stateDir, 'api.sock');
  }

  /**
   * Exposes hostIp:hostPort on the host, forwarded to the same port here; the handle returned
   * closes both the parent's port and `local` (the listener in our namespace).
   */
  async expose(spec: { proto: string; hostIp: string; hostPort: number }, local: ProxyHandle): Promise<ProxyHandle> {
    const want: PortSpec = { proto: spec.proto, parentIP: spec.hostIp, parentPort: spec.hostPort, childPort: spec.hostPort };
    // One left by an earlier run of the daemon inside the same rootlesskit would make POST fail.
    const existing = await call<PortStatus[]>(this.socket, 'GET', '/v1/ports');
    for (const p of existing ?? []) {
      if (p.spec.proto === want.proto && p.spec.parentPort === want.parentPort && p.spec.parentIP === want.parentIP)
        await call(this.socket, 'DELETE', `/v1/ports/${p.id}`);
    }
    const status = await call<PortStatus>(this.socket, 'POST', '/v1/ports', want);
    return {
      ...(local.pid ? { pid: local.pid } : {}),
      close: async () => {
        try {
          await call(this.socket, 'DELETE', `/v1/ports/${status.id}`);
        } finally {
          await local.close();
        }
      },
    };
  }
}
