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

/** Opens a FIFO for reading as a socket libuv can poll; 'end' arrives when the writer closes. */
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
