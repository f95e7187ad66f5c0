// The FIFO a log-driver plugin reads a run's entries from: made under the plugin's scope (a managed
// plugin sees it inside its rootfs, as dockerd's /run/docker/logging) or the daemon's FIFO
// directory, opened read-write and non-blocking (the open never waits for the plugin, and a plugin
// that dies does not break the pipe: the container blocks once the pipe is full instead).
import { randomBytes } from 'node:crypto';
import { constants, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { runCommand } from '../util/helper-shell.ts';

/** Where a managed plugin finds the FIFOs, inside its rootfs (dockerd: /run/docker/logging). */
const MANAGED_FIFO_DIR = '/run/engine/logging';

export class PluginFifo {
  private constructor(
    /** The FIFO's path on the host. */
    readonly host: string,
    /** The path the plugin is given (inside its rootfs for a managed plugin). */
    readonly plugin: string,
    private readonly sock: Socket,
  ) {}

  /** Makes and opens a new FIFO; scopePath maps a managed plugin's paths onto the host. */
  static async create(scopePath: ((p: string) => string) | undefined, fifoDir: string): Promise<PluginFifo> {
    const id = randomBytes(32).toString('hex');
    const hostDir = scopePath ? scopePath(MANAGED_FIFO_DIR) : fifoDir;
    const host = join(hostDir, id);
    await mkdir(hostDir, { recursive: true, mode: 0o700 });
    await runCommand('mkfifo', ['-m', '0700', host]);
    const sock = new Socket({ fd: openSync(host, constants.O_RDWR | constants.O_NONBLOCK), readable: false, writable: true });
    sock.on('error', () => {}); // a write error (EPIPE, the plugin went) is reported by the write that meets it
    return new PluginFifo(host, scopePath ? join(MANAGED_FIFO_DIR, id) : host, sock);
  }

  /** Writes the encoded entries (and empties `out`); waits while the pipe is full. */
  async write(out: Buffer[]): Promise<void> {
    const data = out.length === 1 ? out[0]! : Buffer.concat(out);
    out.length = 0;
    const sock = this.sock;
    if (sock.destroyed) return;
    if (!sock.write(data)) {
      await new Promise<void>((resolve) => {
        const done = () => {
          sock.off('drain', done);
          sock.off('close', done);
          resolve();
        };
        sock.on('drain', done);
        sock.on('close', done);
      });
    }
  }

  /** Resolves once what was queued reached the pipe, or after timeoutMs. */
  async flushed(timeoutMs: number): Promise<void> {
    if (this.sock.writableLength === 0) return;
    await new Promise<void>((resolve) => {
      const t = setTimeout(resolve, timeoutMs);
      this.sock.once('drain', () => {
        clearTimeout(t);
        resolve();
      });
    });
  }

  /** Closes and removes the FIFO. */
  async drop(): Promise<void> {
    this.sock.destroy();
    await rm(this.host, { force: true });
  }
}
