// The userland proxy: forwards connections to a published host port on to the container, for the
// traffic DNAT cannot handle (from the host's loopback). In-process by default (a TCP server or a
// UDP relay in the daemon); with --userland-proxy-path, an external program speaking the
// docker-proxy command line (-proto -host-ip -host-port -container-ip -container-port) that reports
// readiness on fd 3 ("0\n", or "1\n<error>").
import { spawn } from 'node:child_process';
import { createSocket, type RemoteInfo, type Socket as UdpSocket } from 'node:dgram';
import { readFileSync } from 'node:fs';
import { connect, createServer, type Server, type Socket } from 'node:net';
import type { Proto } from './ports.ts';

export interface ProxySpec {
  proto: Proto;
  /** '' / 0.0.0.0 listen on every address (both families when the host has IPv6). */
  hostIp: string;
  hostPort: number;
  containerIp: string;
  containerPort: number;
}

export interface ProxyHandle {
  /** pid of an external proxy (recorded so a restarted daemon can stop it). */
  pid?: number;
  close(): Promise<void>;
}

const UDP_IDLE_MS = 90_000;

function listenHosts(hostIp: string): string[] {
  if (hostIp === '' || hostIp === '0.0.0.0') return ['::', '0.0.0.0'];
  return [hostIp];
}

/** Binds the host port and starts forwarding; rejects when the port cannot be bound. */
export async function startProxy(spec: ProxySpec, externalPath?: string): Promise<ProxyHandle> {
  if (externalPath) return startExternal(spec, externalPath);
  if (spec.proto === 'tcp') return startTcp(spec);
  if (spec.proto === 'udp') return startUdp(spec);
  // SCTP has no Node socket: DNAT alone serves it (as dockerd without the proxy).
  return { close: async () => undefined };
}

/** Reserves a TCP/UDP port without forwarding (userland proxy disabled: DNAT does the work). */
export async function reservePort(spec: ProxySpec): Promise<ProxyHandle> {
  if (spec.proto === 'tcp') {
    // Only holds the port: DNAT takes the traffic before it could reach this listener.
    const server = await listenTcp(spec, (s) => s.destroy());
    return { close: () => closeServer(server) };
  }
  if (spec.proto === 'udp') {
    const sock = await bindUdp(spec);
    return { close: async () => void sock.close() };
  }
  return { close: async () => undefined };
}

async function listenTcp(spec: ProxySpec, onConn: (s: Socket) => void): Promise<Server> {
  let lastErr: unknown;
  for (const host of listenHosts(spec.hostIp)) {
    const server = createServer({ pauseOnConnect: false }, onConn);
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        // '::' is dual-stack: one listener takes IPv4 loopback and IPv6 alike.
        server.listen({ host, port: spec.hostPort, exclusive: true }, () => {
          server.off('error', reject);
          resolve();
        });
      });
      // Listening: a later error (an accept failing) concerns one connection, never the daemon.
      server.on('error', () => undefined);
      return server;
    } catch (err) {
      lastErr = err;
      // EAFNOSUPPORT/EADDRNOTAVAIL on '::' (no IPv6): fall back to IPv4; EADDRINUSE is final.
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') break;
    }
  }
  throw bindError(spec, lastErr);
}

function bindError(spec: ProxySpec, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  const what = code === 'EADDRINUSE' ? 'bind: address already in use' : (err as Error).message;
  return new Error(`Error starting userland proxy: listen ${spec.proto}4 ${spec.hostIp || '0.0.0.0'}:${spec.hostPort}: ${what}`);
}

function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => server.close(() => resolve()));
}

async function startTcp(spec: ProxySpec): Promise<ProxyHandle> {
  const open = new Set<Socket>();
  const server = await listenTcp(spec, (client) => {
    const upstream = connect({ host: spec.containerIp, port: spec.containerPort });
    open.add(client);
    open.add(upstream);
    const done = () => {
      open.delete(client);
      open.delete(upstream);
      client.destroy();
      upstream.destroy();
    };
    client.on('error', done);
    upstream.on('error', done);
    client.on('close', done);
    upstream.on('close', done);
    // Half-close passes through (a client that shuts down its sending side still gets the answer).
    client.pipe(upstream);
    upstream.pipe(client);
  });
  return {
    close: async () => {
      for (const s of open) s.destroy();
      await closeServer(server);
    },
  };
}

async function bindUdp(spec: ProxySpec): Promise<UdpSocket> {
  let lastErr: unknown;
  for (const host of listenHosts(spec.hostIp)) {
    const sock = createSocket({ type: host.includes(':') ? 'udp6' : 'udp4', ipv6Only: false });
    try {
      await new Promise<void>((resolve, reject) => {
        sock.once('error', reject);
        sock.bind({ address: host, port: spec.hostPort, exclusive: true }, () => {
          sock.off('error', reject);
          resolve();
        });
      });
      // Bound: a later error (an ICMP error for one datagram) concerns one flow, never the daemon.
      sock.on('error', () => undefined);
      return sock;
    } catch (err) {
      lastErr = err;
      sock.close();
      if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') break;
    }
  }
  throw bindError(spec, lastErr);
}

async function startUdp(spec: ProxySpec): Promise<ProxyHandle> {
  const front = await bindUdp(spec);
  // One upstream socket per client address, so replies find their way back; dropped when idle.
  const flows = new Map<string, { sock: UdpSocket; timer: NodeJS.Timeout }>();
  const drop = (key: string) => {
    const f = flows.get(key);
    if (!f) return;
    clearTimeout(f.timer);
    f.sock.close();
    flows.delete(key);
  };
  front.on('message', (msg: Buffer, from: RemoteInfo) => {
    const key = `${from.address}|${from.port}`;
    let f = flows.get(key);
    if (!f) {
      const sock = createSocket('udp4');
      sock.on('error', () => drop(key));
      sock.on('message', (reply) => {
        front.send(reply, from.port, from.address);
        const cur = flows.get(key);
        if (cur) cur.timer.refresh();
      });
      f = { sock, timer: setTimeout(() => drop(key), UDP_IDLE_MS) };
      flows.set(key, f);
    }
    f.timer.refresh();
    f.sock.send(msg, spec.containerPort, spec.containerIp);
  });
  return {
    close: async () => {
      for (const key of [...flows.keys()]) drop(key);
      await new Promise<void>((resolve) => front.close(() => resolve()));
    },
  };
}

async function startExternal(spec: ProxySpec, path: string): Promise<ProxyHandle> {
  const args = [
    '-proto',
    spec.proto,
    '-host-ip',
    spec.hostIp || '0.0.0.0',
    '-host-port',
    String(spec.hostPort),
    '-container-ip',
    spec.containerIp,
    '-container-port',
    String(spec.containerPort),
  ];
  const child = spawn(path, args, { stdio: ['ignore', 'ignore', 'pipe', 'pipe'], detached: false });
  // A failed spawn may report more than once (and after the start): never an unhandled 'error'.
  child.on('error', () => undefined);
  let stderr = '';
  child.stderr!.on('data', (d: Buffer) => (stderr += d));
  const signal = child.stdio[3] as NodeJS.ReadableStream;
  const status = await new Promise<string>((resolve, reject) => {
    let text = '';
    const timer = setTimeout(() => reject(new Error(`userland proxy ${path} did not report within 16s`)), 16_000);
    signal.on('data', (d: Buffer) => {
      text += d.toString();
      if (text.includes('\n') && (text.startsWith('0') || text.split('\n').length > 2)) {
        clearTimeout(timer);
        resolve(text);
      }
    });
    child.once('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`Error starting userland proxy: ${e.message}`));
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      resolve(text || `1\nexited with status ${code}${stderr ? `: ${stderr.trim()}` : ''}`);
    });
  });
  if (!status.startsWith('0')) {
    child.kill('SIGKILL');
    throw new Error(`Error starting userland proxy: ${status.split('\n').slice(1).join(' ').trim()}`);
  }
  child.unref();
  (signal as unknown as { unref?: () => void }).unref?.();
  child.stderr!.removeAllListeners('data');
  (child.stderr as unknown as { unref?: () => void }).unref?.();
  return {
    pid: child.pid!,
    close: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2000);
      await exited;
      clearTimeout(timer);
    },
  };
}

/** Stops an external proxy a previous daemon started (after a crash), if that pid still is one. */
export function killStaleProxy(pid: number, path: string): void {
  try {
    const cmd = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[0] ?? '';
    if (cmd === path) process.kill(pid, 'SIGKILL');
  } catch {
    // ENOENT (no /proc entry) or ESRCH: the process is gone already
  }
}
