// Connections to the daemon: unix socket, TCP, TLS, and ssh. Each transport is a createConnection
// function for node:http (one agent per client, keep-alive), and the same function opens the raw
// connections of hijacked streams.
//
// ssh: we run the system `ssh` with `engine system dial-stdio` as the remote command (the docker CLI
// does the same with `docker system dial-stdio`) rather than an npm ssh library: the user's ssh
// config, agent, known_hosts, ProxyJump and keys all work as they do for `ssh` itself, nothing is
// re-implemented, and no dependency is added. BatchMode keeps ssh from prompting: public keys only,
// and a passphrase-protected key needs an agent (the spec's rule). ENGINE_SSH_OPTS adds options
// (space-separated, e.g. "-F /path/config"), our extension.
import type * as ChildProcess from 'node:child_process';
import { connect as netConnect, type Socket } from 'node:net';
import type { Duplex } from 'node:stream';
import type * as Tls from 'node:tls';
import type { ConnectionSettings, HostTarget } from './host.ts';

export type Connector = () => Duplex;

// node:tls (with crypto) and node:child_process load only for the transports that use them: tls
// alone costs a CLI run ~3 ms of CPU per start-up otherwise spent for nothing on a unix socket.
// process.getBuiltinModule rather than createRequire(import.meta.url): the CLI bundle is CommonJS
// (scripts/bundle.mjs), where import.meta has no url.
const tlsModule = () => process.getBuiltinModule('node:tls') as typeof Tls;
const childProcess = () => process.getBuiltinModule('node:child_process') as typeof ChildProcess;

/** The remote command that bridges stdio to the daemon's socket. */
export function dialStdioCommand(target: Extract<HostTarget, { kind: 'ssh' }>): string {
  const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  return target.socketPath ? `engine --host ${quote(`unix://${target.socketPath}`)} system dial-stdio` : 'engine system dial-stdio';
}

export function sshArgs(target: Extract<HostTarget, { kind: 'ssh' }>, env: NodeJS.ProcessEnv = process.env): string[] {
  const extra = (env.ENGINE_SSH_OPTS ?? '').split(/\s+/).filter(Boolean);
  const args = [...extra, '-o', 'ConnectTimeout=30', '-o', 'BatchMode=yes', '-T'];
  if (target.user) args.push('-l', target.user);
  if (target.port) args.push('-p', String(target.port));
  args.push('--', target.host, dialStdioCommand(target));
  return args;
}

/** The class of the ssh transport's streams (sshStreamClass). */
export type SshStreamClass = new (args: string[]) => Duplex;
let sshClass: SshStreamClass | undefined;

/**
 * One ssh process as a duplex: writes go to its stdin, reads come from its stdout; end() closes its
 * stdin (dial-stdio then half-closes the daemon connection). The socket methods node:http calls are
 * no-ops here. The class is made on first use: it extends node:stream's Duplex, and a class made
 * at load time loads node:stream with the module, in every CLI run (JavaScript compiled at
 * start-up under Bun). The SDK exports it as `SshStream` (ssh-stream.ts).
 */
export function sshStreamClass(): SshStreamClass {
  if (sshClass) return sshClass;
  const { Duplex } = process.getBuiltinModule('node:stream');
  class SshStream extends Duplex {
    private readonly child;
    private stderr = '';
    constructor(args: string[]) {
      super({ allowHalfOpen: true });
      this.child = childProcess().spawn('ssh', args, { stdio: ['pipe', 'pipe', 'pipe'] });
      this.child.stdout.on('data', (b: Buffer) => {
        if (!this.push(b)) this.child.stdout.pause();
      });
      this.child.stdout.on('end', () => this.push(null));
      this.child.stderr.on('data', (b: Buffer) => (this.stderr = (this.stderr + b.toString()).slice(-4096)));
      this.child.on('error', (e) => this.destroy(e));
      this.child.on('close', (code) => {
        if (code !== 0 && code !== null && !this.destroyed && !this.readableEnded)
          this.destroy(new Error(`ssh exited with status ${code}: ${this.stderr.trim()}`));
      });
      this.child.stdin.on('error', () => {
        // EPIPE when ssh has already gone; its exit status reports the cause (the 'close' handler).
      });
    }
    override _read(): void {
      this.child.stdout.resume();
    }
    override _write(chunk: Buffer, _enc: BufferEncoding, cb: (e?: Error | null) => void): void {
      this.child.stdin.write(chunk, cb);
    }
    override _final(cb: (e?: Error | null) => void): void {
      this.child.stdin.end(cb);
    }
    override _destroy(err: Error | null, cb: (e?: Error | null) => void): void {
      if (this.child.exitCode === null) this.child.kill();
      cb(err);
    }
    setTimeout(): this {
      return this;
    }
    setNoDelay(): this {
      return this;
    }
    setKeepAlive(): this {
      return this;
    }
    ref(): this {
      return this;
    }
    unref(): this {
      return this;
    }
  }
  return (sshClass = SshStream);
}

export function connector(settings: ConnectionSettings): Connector {
  const t = settings.target;
  if (t.kind === 'unix') return () => netConnect({ path: t.path });
  if (t.kind === 'ssh') {
    const args = sshArgs(t);
    const SshStream = sshStreamClass();
    return () => new SshStream(args);
  }
  const tls = settings.tls;
  if (!tls) return () => netConnect({ host: t.host, port: t.port });
  return () =>
    tlsModule().connect({
      host: t.host,
      port: t.port,
      servername: tls.servername ?? (/^[\d.]+$|:/.test(t.host) ? undefined : t.host),
      ca: tls.ca,
      cert: tls.cert,
      key: tls.key,
      rejectUnauthorized: tls.verify,
      minVersion: 'TLSv1.2',
    }) as Socket;
}
