// The metrics listener (`--metrics-addr host:port`): GET /metrics in the Prometheus text format,
// on its own TCP socket, apart from the API (as dockerd serves it).
import { createServer, type Server } from 'node:http';
import { invalidParameter } from '../errors.ts';
import type { Logger } from '../util/log.ts';

export interface MetricsSource {
  render(): Promise<{ contentType: string; text: string }>;
}

/** "127.0.0.1:9323", "[::1]:9323" or ":9323" (all addresses). */
export function parseMetricsAddr(addr: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]*)):(\d{1,5})$/.exec(addr);
  const port = Number(m?.[3]);
  if (!m || port > 65535) throw invalidParameter(`invalid metrics-addr ${JSON.stringify(addr)}: want host:port`);
  return { host: m[1] ?? (m[2] || '0.0.0.0'), port };
}

export async function startMetricsServer(
  addr: string,
  source: MetricsSource,
  log: Pick<Logger, 'info' | 'warn'>,
): Promise<{ close(): Promise<void> }> {
  const { host, port } = parseMetricsAddr(addr);
  const server: Server = createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('404 page not found\n');
      return;
    }
    source.render().then(
      (m) => res.writeHead(200, { 'Content-Type': m.contentType }).end(m.text),
      (err: unknown) => {
        log.warn(`metrics: ${(err as Error).message}`);
        res.writeHead(500, { 'Content-Type': 'text/plain; charset=utf-8' }).end(`${(err as Error).message}\n`);
      },
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  log.info(`metrics API listening on ${addr}`);
  return { close: () => new Promise<void>((r) => server.close(() => r())) };
}
