// Opens the daemon's API sockets (unix, tcp with or without TLS, systemd-activated fds) as node
// HTTP servers and hands every request and upgrade to the API layer with the listener's prefix.
import { closeSync, readFileSync } from 'node:fs';
import { chmod, chown, lstat, mkdir, readFile, unlink } from 'node:fs/promises';
import type * as Http from 'node:http';
import { http } from '../util/node-http.ts';
import https from 'node:https';
import net from 'node:net';
import { DEFAULT_CIPHERS } from 'node:tls';
import { dirname } from 'node:path';
import type { Duplex } from 'node:stream';
import type { Logger } from '../util/log.ts';
import { answerClientError, jsonErrorResponse } from './client-error.ts';
import { formatListenSpec, type ListenSpec } from './host-spec.ts';

export interface TlsSettings {
  cert: string; // path of the server certificate (PEM)
  key: string; // path of the server key (PEM)
  ca?: string; // path of the CA bundle that client certificates must chain to
  verify: boolean; // require and verify client certificates
}

export interface ListenerOptions {
  tls?: TlsSettings;
  group: string; // owner group of unix sockets ('' = leave the daemon's own group)
  log: Logger;
  onRequest(req: Http.IncomingMessage, res: Http.ServerResponse, prefix: string): void;
  onUpgrade(req: Http.IncomingMessage, socket: Duplex, head: Buffer, prefix: string): void;
  /** CONNECT requests (Node keeps them apart from 'request'); without it they get a JSON 404. */
  onConnect?(req: Http.IncomingMessage, socket: Duplex, head: Buffer, prefix: string): void;
  /** Where LISTEN_PID / LISTEN_FDS are read from (and removed from); defaults to process.env. */
  env?: NodeJS.ProcessEnv;
}

export interface OpenListener {
  spec: ListenSpec;
  address: string; // printable, e.g. unix:///var/run/engine.sock, tcp://127.0.0.1:2375, fd://3
  /** Stops accepting, ends idle keep-alive connections, waits for in-flight requests, removes the socket file. */
  close(): Promise<void>;
  /** Destroys every connection, hijacked streams included (for the end of a shutdown grace period). */
  closeAllConnections(): void;
  server: Http.Server | https.Server;
}

// Longer than the idle timeout of common clients (Go's transport: 90s) so that the client, not
// the server, closes an idle connection; otherwise a request can race the server's close.
export const KEEP_ALIVE_TIMEOUT_MS = 120_000;
// Go's net/http default; docker clients send large X-Registry-Auth / X-Registry-Config headers.
const MAX_HEADER_SIZE = 1 << 20;
const FIRST_ACTIVATION_FD = 3; // SD_LISTEN_FDS_START

export async function openListeners(specs: ListenSpec[], opts: ListenerOptions): Promise<OpenListener[]> {
  const tlsOptions = opts.tls ? loadTls(opts.tls) : undefined;
  const fdsBySpec = specs.some((s) => s.kind === 'fd')
    ? pickActivationFds(specs, opts.env ?? process.env)
    : new Map<ListenSpec, number[]>();
  const opened: OpenListener[] = [];
  try {
    for (const spec of specs) {
      switch (spec.kind) {
        case 'unix':
          // Like dockerd, TLS covers network sockets only; clients speak plain HTTP on unix sockets.
          opened.push(await openUnix(spec, opts));
          break;
        case 'tcp':
          opened.push(await openTcp(spec, opts, tlsOptions));
          break;
        case 'fd':
          for (const fd of fdsBySpec.get(spec) ?? []) opened.push(await openFd(spec, fd, opts, tlsOptions));
          break;
      }
    }
  } catch (err) {
    for (const l of opened) {
      l.closeAllConnections();
      await l.close().catch(() => {}); // Already failing: closing what was opened is best effort; the first error is the one reported.
    }
    throw err;
  }
  for (const l of opened) opts.log.info(`API listen on ${l.address}`);
  return opened;
}

/** The TLS options of a server from the daemon's files (also the web console's, under --tls/--tlsverify). */
export function loadTls(tls: TlsSettings): https.ServerOptions {
  const read = (what: string, path: string) => {
    try {
      return readFileSync(path);
    } catch (err) {
      throw new Error(`could not read TLS ${what} ${path}: ${(err as Error).message}`, { cause: err });
    }
  };
  return {
    cert: read('certificate', tls.cert),
    key: read('key', tls.key),
    // The CA only matters for checking client certificates; --tls alone must not need the file.
    ...(tls.verify && tls.ca ? { ca: read('CA certificate', tls.ca) } : {}),
    // Spec: TLS 1.0 and later; SSLv3 and earlier are refused. OpenSSL 3's default security level
    // silently disables TLS 1.0/1.1, so it is lowered; node's curated cipher list stays in force
    // (no NULL, export, RC4, DES or MD5 suites).
    minVersion: 'TLSv1',
    ciphers: `${DEFAULT_CIPHERS}:@SECLEVEL=0`,
    requestCert: tls.verify,
    rejectUnauthorized: tls.verify,
  };
}

/** Creates the HTTP(S) server and the bookkeeping shared by all listener kinds. */
function createServer(spec: ListenSpec, prefix: string, opts: ListenerOptions, tlsOptions: https.ServerOptions | undefined) {
  const serverOptions: Http.ServerOptions = { requestTimeout: 0, keepAliveTimeout: KEEP_ALIVE_TIMEOUT_MS, maxHeaderSize: MAX_HEADER_SIZE };
  const server = tlsOptions ? https.createServer({ ...serverOptions, ...tlsOptions }) : http.createServer(serverOptions);
  server.requestTimeout = 0; // logs, attach, events and pulls stream for as long as they like
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;

  // Raw sockets, tracked ourselves because hijacked (upgraded) connections leave node's HTTP
  // bookkeeping but must still be cut at the end of a shutdown grace period.
  const sockets = new Set<net.Socket>();
  server.on('connection', (socket: net.Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  let closing = false;
  server.on('request', (req, res) => {
    // A keep-alive connection whose request finishes after close() began must not linger idle.
    if (closing) res.shouldKeepAlive = false;
    else
      res.once('finish', () => {
        if (closing) setImmediate(() => server.closeIdleConnections());
      });
    opts.onRequest(req, res, prefix);
  });
  server.on('upgrade', (req, socket, head) => {
    // Node's own error listener leaves an upgraded socket: a client that resets it while a route
    // still answers on it (stats, events, logs asked for with an Upgrade header) must not become an
    // uncaught error that ends the daemon.
    socket.on('error', (err: Error) =>
      opts.log.debug('upgraded connection broke', { listener: formatListenSpec(spec), error: err.message }),
    );
    opts.onUpgrade(req, socket, head, prefix);
  });
  // Without a listener Node closes CONNECT connections without a word; no route takes CONNECT, so
  // the API server answers it like any unknown route.
  server.on('connect', (req, socket, head) => {
    if (opts.onConnect) opts.onConnect(req, socket, head, prefix);
    else socket.end(jsonErrorResponse(404, 'page not found'));
  });
  // Requests the parser refuses get a JSON answer instead of Node's bare status line.
  server.on('clientError', (err: Error, socket: Duplex) => answerClientError(err, socket, opts.log, formatListenSpec(spec)));
  // Errors after start-up (e.g. EMFILE on accept) are logged; unhandled, they would end the process.
  server.once('listening', () => {
    server.on('error', (err) => opts.log.error('API listener error', { listener: formatListenSpec(spec), error: err }));
  });
  if (tlsOptions) {
    server.on('tlsClientError', (err: Error, socket: net.Socket) => {
      opts.log.debug('TLS handshake failed', { listener: formatListenSpec(spec), remote: socket.remoteAddress, error: err.message });
    });
  }

  let closed: Promise<void> | undefined;
  const close = (afterClose?: () => Promise<void>): Promise<void> => {
    closed ??= new Promise<void>((resolve) => {
      closing = true;
      server.close(() => resolve());
      server.closeIdleConnections();
    }).then(() => afterClose?.());
    return closed;
  };
  const closeAllConnections = () => {
    server.closeAllConnections();
    for (const s of sockets) s.destroy();
  };
  return { server, close, closeAllConnections };
}

function listen(server: net.Server, target: net.ListenOptions, beforeBind?: () => () => void): Promise<void> {
  return new Promise((resolve, reject) => {
    const onError = (err: Error) => reject(err);
    server.once('error', onError);
    const restore = beforeBind?.();
    try {
      server.listen(target, () => {
        server.off('error', onError);
        resolve();
      });
    } catch (err) {
      server.off('error', onError);
      reject(err as Error);
    } finally {
      restore?.();
    }
  });
}

// ---------------------------------------------------------------------------------------------
// unix

async function openUnix(spec: Extract<ListenSpec, { kind: 'unix' }>, opts: ListenerOptions): Promise<OpenListener> {
  const path = spec.path;
  await mkdir(dirname(path), { recursive: true, mode: 0o755 });
  await clearStaleSocket(path);
  const gid = await socketGid(path, opts.group, opts.log);

  const { server, close, closeAllConnections } = createServer(spec, '', opts, undefined);
  // Bind under a tight umask so the socket is never reachable by others before chmod; node binds
  // a path synchronously inside listen(), so the umask change does not outlive this call.
  await listen(server, { path }, () => {
    const old = process.umask(0o177);
    return () => process.umask(old);
  }).catch((err: NodeJS.ErrnoException) => {
    throw new Error(`can't create unix socket ${path}: ${err.message}`, { cause: err });
  });
  const { ino } = await lstat(path);
  try {
    await chmod(path, 0o660);
  } catch (err) {
    await close();
    throw new Error(`can't set the mode of unix socket ${path}: ${(err as Error).message}`, { cause: err });
  }
  // Failing to hand the socket to the group only narrows access (0660, our own group), so warn.
  await chown(path, process.getuid?.() ?? 0, gid).catch((err: Error) => {
    opts.log.warn(`could not change group ${path} to ${opts.group}: ${err.message}`);
  });

  return {
    spec,
    address: `unix://${path}`,
    server,
    closeAllConnections,
    close: () =>
      close(async () => {
        // Only remove the file if it is still the socket we created.
        const st = await lstat(path).catch(() => undefined); // ENOENT: the socket file is already gone
        if (st && st.ino === ino && st.isSocket()) await unlink(path).catch(() => {}); // Shutting down: a socket file someone else removed or replaced is not ours to worry about.
      }),
  };
}

/** Removes a socket file left by a dead daemon; refuses when something still answers on it. */
async function clearStaleSocket(path: string): Promise<void> {
  let st;
  try {
    st = await lstat(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (!st.isSocket()) throw new Error(`can't create unix socket ${path}: the path exists and is not a socket`);
  if (await socketAnswers(path)) {
    throw new Error(
      `can't create unix socket ${path}: listen unix ${path}: bind: address already in use (another daemon is serving on it)`,
    );
  }
  await unlink(path).catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'ENOENT') throw err;
  });
}

function socketAnswers(path: string): Promise<boolean> {
  return new Promise((resolve) => {
    const conn = net.connect({ path });
    const done = (answers: boolean) => {
      conn.destroy();
      resolve(answers);
    };
    conn.once('connect', () => done(true));
    // Only "refused" (or gone) proves nobody listens; anything else, e.g. a full backlog, means someone does.
    conn.once('error', (err: NodeJS.ErrnoException) => done(!(err.code === 'ECONNREFUSED' || err.code === 'ENOENT')));
  });
}

/** The gid for the socket: the named group from /etc/group (or a numeric gid), else our own group. */
async function socketGid(path: string, group: string, log: Logger): Promise<number> {
  const ownGid = process.getgid?.() ?? 0;
  if (group === '') return ownGid;
  const gid = await lookupGroup(group);
  if (gid !== undefined) return gid;
  log.warn(`could not change group ${path} to ${group}: group ${group} not found`);
  return ownGid;
}

export async function lookupGroup(name: string, groupFile = '/etc/group'): Promise<number | undefined> {
  const text = await readFile(groupFile, 'utf8').catch(() => ''); // No group file means no such group: the caller warns that the group was not found.
  for (const line of text.split('\n')) {
    const [groupName, , gid] = line.split(':');
    if (groupName === name && gid !== undefined && /^[0-9]+$/.test(gid)) return Number(gid);
  }
  return /^[0-9]+$/.test(name) ? Number(name) : undefined;
}

// ---------------------------------------------------------------------------------------------
// tcp

async function openTcp(
  spec: Extract<ListenSpec, { kind: 'tcp' }>,
  opts: ListenerOptions,
  tlsOptions?: https.ServerOptions,
): Promise<OpenListener> {
  const { server, close, closeAllConnections } = createServer(spec, spec.prefix, opts, tlsOptions);
  await listen(server, { host: spec.host, port: spec.port }).catch((err: Error) => {
    throw new Error(`can't listen on ${formatListenSpec(spec)}: ${err.message}`, { cause: err });
  });
  const bound = server.address() as net.AddressInfo;
  const address = formatListenSpec({ ...spec, host: bound.address, port: bound.port });
  if (!opts.tls) warnPlainTcp(opts.log, address);
  else if (!opts.tls.verify)
    opts.log.warn('TLS without client certificate verification: anyone who can reach this address controls the daemon; use --tlsverify', {
      host: address,
    });
  return { spec, address, server, closeAllConnections, close: () => close() };
}

function warnPlainTcp(log: Logger, address: string): void {
  const lines = [
    'Listening on TCP without TLS: the API is unencrypted and unauthenticated.',
    'Anyone who can reach this address has full control of the daemon and, through it, root on this host.',
    'Even a loopback address can be reached by scripts running in a local browser.',
    'Use --tlsverify with client certificates, or listen only on the unix socket.',
  ];
  for (const line of lines) log.warn(line, { host: address });
}

// ---------------------------------------------------------------------------------------------
// fd (systemd socket activation)

/**
 * Maps each fd spec to the activated fds it takes, following sd_listen_fds(3): fds start at 3,
 * count LISTEN_FDS, and only count when LISTEN_PID is us. The LISTEN_* variables are removed so
 * children do not see them. Activated fds that no spec takes are closed.
 */
function pickActivationFds(specs: ListenSpec[], env: NodeJS.ProcessEnv): Map<ListenSpec, number[]> {
  const fds = activationFds(env);
  const taken = new Map<ListenSpec, number[]>();
  for (const spec of specs) {
    if (spec.kind !== 'fd') continue;
    if (fds.length === 0) throw new Error('no sockets found via socket activation: make sure the service was started by systemd');
    if (spec.name === '') {
      taken.set(spec, fds);
    } else {
      const fd = Number(spec.name);
      if (!fds.includes(fd)) throw new Error(`failed to find the socket with fd ${spec.name}`);
      taken.set(spec, [fd]);
    }
  }
  const used = new Set([...taken.values()].flat());
  for (const fd of fds) {
    if (used.has(fd)) continue;
    try {
      closeSync(fd);
    } catch {
      // EBADF: already closed, nothing to release
    }
  }
  return taken;
}

function activationFds(env: NodeJS.ProcessEnv): number[] {
  const pidText = env.LISTEN_PID ?? '';
  const countText = env.LISTEN_FDS ?? '';
  delete env.LISTEN_PID;
  delete env.LISTEN_FDS;
  delete env.LISTEN_FDNAMES;
  if (!/^[0-9]+$/.test(pidText) || Number(pidText) !== process.pid) return [];
  if (!/^[0-9]+$/.test(countText)) return [];
  return Array.from({ length: Number(countText) }, (_, i) => FIRST_ACTIVATION_FD + i);
}

async function openFd(
  spec: Extract<ListenSpec, { kind: 'fd' }>,
  fd: number,
  opts: ListenerOptions,
  tlsOptions?: https.ServerOptions,
): Promise<OpenListener> {
  const { server, close, closeAllConnections } = createServer(spec, '', opts, tlsOptions);
  await listen(server, { fd } as net.ListenOptions).catch((err: Error) => {
    throw new Error(`failed to listen on systemd activated file: fd ${fd}: ${err.message}`, { cause: err });
  });
  return { spec, address: `fd://${fd}`, server, closeAllConnections, close: () => close() };
}
