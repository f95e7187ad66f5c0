// The FIFOs a container's shim writes stdout/stderr to (and reads stdin from). The read side is
// opened non-blocking BEFORE Tasks.Create: a FIFO nobody reads makes Tasks.Create hang.
import { constants, openSync } from 'node:fs';
import { mkdir, rm } from 'node:fs/promises';
import { Socket } from 'node:net';
import { join } from 'node:path';
import { runCommand } from '../../util/helper-shell.ts';

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
const READ_BUFFER = Buffer.allocUnsafeSlow(64 * 1024);

/** A FIFO's read side, polled by libuv; 'end' on its socket arrives when the writer closes. */
export class FifoReader {
  readonly socket: Socket;
  /**
   * Each read, as a view into the shared buffer: valid only during the call. Returning false
   * pauses the reader (socket.resume() restarts it). Reading starts with the first resume().
   */
  onData: (data: Buffer) => boolean = () => true;

  constructor(fd: number) {
    this.socket = new Socket({
      fd,
      readable: true,
      writable: false,
      onread: { buffer: READ_BUFFER, callback: (n: number, buf: Uint8Array) => this.onData((buf as Buffer).subarray(0, n)) },
    });
    // The socket asked for a first read on creation; nothing is read before the next turn of the loop.
    this.socket.pause();
  }

  destroy(): void {
    this.socket.destroy();
  }
}

/** Opens a container's output FIFO (not read from until its socket is resumed). */
export function openOutputFifo(path: string): FifoReader {
  return new FifoReader(openSync(path, constants.O_RDONLY | constants.O_NONBLOCK));
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
