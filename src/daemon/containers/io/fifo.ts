// The FIFOs a container's shim writes stdout/stderr to (and reads stdin from). The read side is
// opened non-blocking BEFORE Tasks.Create: a FIFO nobody reads makes Tasks.Create hang.
import { constants, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { runCommand } from '../../../util/helper-shell.ts';

export interface StdioPaths {
  dir: string;
  stdin?: string;
  stdout: string;
  stderr?: string;
}

/** Creates the FIFOs in one mkfifo call (Node has no mkfifo of its own). */
export async function makeFifos(dir: string, prefix: string, want: { stdin: boolean; stderr: boolean }): Promise<StdioPaths> {
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const paths: StdioPaths = { dir, stdout: join(dir, `${prefix}-stdout`) };
  if (want.stdin) paths.stdin = join(dir, `${prefix}-stdin`);
  if (want.stderr) paths.stderr = join(dir, `${prefix}-stderr`);
  const all = [paths.stdin, paths.stdout, paths.stderr].filter((p): p is string => !!p);
  await Promise.all(all.map((p) => rm(p, { force: true })));
  await runCommand('mkfifo', ['-m', '0600', ...all]);
  return paths;
}

/**
 * One buffer every FIFO reader reads into: a read's bytes are handed to onData synchronously and
 * consumed (encoded, copied) before libuv reads again, so no reader needs its own, and no read
 * allocates (a container's output arrives in reads of a few KiB each: tens of thousands a second).
 */
const READ_BUFFER = Buffer.allocUnsafeSlow(256 * 1024);

/**
 * A flooding writer (FLOOD_BYTES within FLOOD_WINDOW_MS) gets its pipe widened from the default
 * 64 KiB to WIDE_PIPE, and from then on its reader waits PACE_MS after each read: one read of
 * everything that came in meanwhile instead of one per 4 KiB write of the shim (each read a
 * wake-up, a context switch, a pass through the log encoder). Measured on 256 MiB of 100-byte
 * lines: the reader's CPU 1.7 s → 0.9 s. Without the wider pipe a pause would fill the pipe and
 * stall the writer, so a pipe that cannot be widened is not paced.
 */
const FLOOD_WINDOW_MS = 100;
const FLOOD_BYTES = 512 * 1024;
const PACE_MS = 1;
const WIDE_PIPE = 1024 * 1024; // fs.pipe-max-size's default
// F_SETPIPE_SZ (1031) through perl (Node has no fcntl; perl-base is in every Debian): a pipe's
// capacity is the pipe's, not a descriptor's, and our read end keeps the pipe while perl's closes.
const WIDEN_SCRIPT =
  'use Fcntl; my $n = 0 + shift; for my $p (@ARGV) { sysopen(my $f, $p, O_RDONLY|O_NONBLOCK) or die "$p: $!\\n"; fcntl($f, 1031, $n) or die "$p: F_SETPIPE_SZ: $!\\n" }';

/** A FIFO's read side, polled by libuv; 'end' on its socket arrives when the writer closes. */
export class FifoReader {
  readonly socket: Socket;
  /**
   * Each read, as a view into the shared buffer: valid only during the call. Returning false
   * pauses the reader (socket.resume() restarts it). Reading starts with the first resume().
   */
  onData: (data: Buffer) => boolean = () => true;
  private windowStart = 0;
  private windowBytes = 0;
  private pipe: 'default' | 'widening' | 'wide' = 'default';

  constructor(
    fd: number,
    private readonly path: string,
  ) {
    this.socket = new Socket({
      fd,
      readable: true,
      writable: false,
      onread: { buffer: READ_BUFFER, callback: (n: number, buf: Uint8Array) => this.onRead(n, buf as Buffer) },
    });
    // The socket asked for a first read on creation; nothing is read before the next turn of the loop.
    this.socket.pause();
  }

  private onRead(n: number, buf: Buffer): boolean {
    if (!this.onData(buf.subarray(0, n))) return false;
    if (this.pipe === 'wide') {
      if (n === READ_BUFFER.length) return true; // more is waiting
      setTimeout(() => {
        if (!this.socket.destroyed) this.socket.resume();
      }, PACE_MS);
      return false;
    }
    if (this.pipe === 'widening') return true;
    const now = performance.now();
    if (now - this.windowStart > FLOOD_WINDOW_MS) {
      this.windowStart = now;
      this.windowBytes = 0;
    }
    this.windowBytes += n;
    if (this.windowBytes >= FLOOD_BYTES) {
      this.pipe = 'widening';
      runCommand('perl', ['-e', WIDEN_SCRIPT, String(WIDE_PIPE), this.path]).then(
        () => void (this.pipe = 'wide'),
        () => {}, // stays 'widening': read as it comes, never paced
      );
    }
    return true;
  }

  /** The pipe was widened (and reads are paced). */
  get widened(): boolean {
    return this.pipe === 'wide';
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Opens a container's output FIFO (not read from until its socket is resumed). */
export function openOutputFifo(path: string): FifoReader {
  return new FifoReader(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK), path);
}

/** Opens a FIFO for reading as a plain socket (exec output); 'end' arrives when the writer closes. */
export function openFifoReader(path: string): Socket {
  const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
  return new Socket({ fd, readable: true, writable: false });
}

/**
 * Opens a FIFO for writing (stdin). O_RDWR never blocks and keeps the FIFO open even before the
 * shim opens its read side; closing our end delivers EOF to the process.
 */
export function openFifoWriter(path: string): Socket {
  const fd = openSync(path, constants.O_RDWR | constants.O_NONBLOCK);
  return new Socket({ fd, readable: false, writable: true });
}
