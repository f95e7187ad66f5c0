// Connecting the terminal to a hijacked attach or exec stream: stdin copied in (raw mode when the
// session has a TTY, and half-closed at EOF so the process sees end of input), output copied out
// (demultiplexed to stdout and stderr without a TTY), and the terminal size sent at start and on
// every SIGWINCH.
import { DEFAULT_DETACH_KEYS, parseDetachKeys as parseKeys } from '../wire/detach-keys.ts';
import type * as ChildProcess from 'node:child_process';
import type { HijackedConn } from '../client/containers.ts';
import { realStdout, writeOutput } from './out.ts';

export interface PumpOptions {
  tty: boolean;
  stdin: boolean;
  /** The detach sequence ("ctrl-p,ctrl-q" by default): seen in stdin, the session ends detached. */
  detachKeys?: string;
  /** Sends the terminal size: called at start and on SIGWINCH when stdout is a terminal. */
  resize?: (h: number, w: number) => Promise<void>;
}

/**
 * Sets raw mode on a TTY stdin for the session; returns the restore function. The runtime's raw mode
 * (libuv's) keeps output post-processing on, so the container's "\r\n" would reach the screen as
 * "\r\r\n"; raw as the docker CLI makes it (Go's MakeRaw) turns it off too: `stty -opost` on the
 * terminal, whose settings `stty -g` saved are put back at the end.
 */
export function rawMode(on: boolean): () => void {
  // process.stdin is not touched otherwise: under Bun it is built on first use, with node:stream.
  if (!on) return () => {};
  const stdin = process.stdin;
  if (!stdin.isTTY) return () => {};
  const { spawnSync } = process.getBuiltinModule('node:child_process') as typeof ChildProcess;
  const stty = (args: string[]) => spawnSync('stty', args, { stdio: ['inherit', 'pipe', 'ignore'], encoding: 'utf8' });
  const saved = stty(['-g']);
  stdin.setRawMode(true);
  stty(['-opost']);
  return () => {
    stdin.setRawMode(false);
    if (saved.status === 0 && saved.stdout.trim()) stty([saved.stdout.trim()]);
  };
}

export function terminalSize(): [number, number] | undefined {
  const out = realStdout();
  return out.isTTY && out.rows && out.columns ? [out.rows, out.columns] : undefined;
}

/** Parses docker's detach-keys format (wire/detach-keys.ts); the default is ctrl-p,ctrl-q. */
export function parseDetachKeys(spec: string | undefined): Buffer {
  return parseKeys(spec || DEFAULT_DETACH_KEYS);
}

/**
 * Resolves once the output has ended: detached = true when the user typed the detach sequence (the
 * daemon, which gets the same keys, ends the session and the container runs on), false when the
 * process ended.
 */
export async function pump(h: HijackedConn, opts: PumpOptions): Promise<{ detached: boolean }> {
  const seq = opts.stdin ? parseDetachKeys(opts.detachKeys) : Buffer.alloc(0);
  let matched = 0;
  let detached = false;
  const restore = rawMode(opts.tty && opts.stdin);
  const onResize = () => {
    const size = terminalSize();
    if (size && opts.resize)
      opts.resize(size[0], size[1]).catch(() => {
        // a resize racing the process's exit fails with a conflict: nothing to resize any more
      });
  };
  if (opts.tty) {
    onResize();
    realStdout().on('resize', onResize);
  }
  let stdinDone = false;
  if (opts.stdin) {
    const stdin = process.stdin;
    stdin.on('data', (b: Buffer) => {
      for (const byte of b) {
        matched = byte === seq[matched] ? matched + 1 : byte === seq[0] ? 1 : 0;
        if (seq.length && matched === seq.length) detached = true;
      }
      if (!h.stream.destroyed && !h.stream.writableEnded) h.stream.write(b);
    });
    stdin.once('end', () => {
      stdinDone = true;
      if (!h.stream.destroyed && !h.stream.writableEnded) h.stream.end();
    });
    stdin.resume();
  }
  try {
    for await (const f of h.output()) {
      const written = writeOutput(f.stream === 'stderr' ? 'err' : 'out', f.data);
      if (written) await written;
    }
  } catch (e) {
    // The connection is reset when the daemon closes it after the process ends: that is the end of output.
    if ((e as NodeJS.ErrnoException).code !== 'ECONNRESET') throw e;
  } finally {
    restore();
    // Only a TTY session listens (realStdout() builds process.stdout, which a run without output never needs).
    if (opts.tty) realStdout().off('resize', onResize);
    if (opts.stdin && !stdinDone) {
      process.stdin.pause();
      process.stdin.removeAllListeners('data');
    }
    h.stream.destroy();
  }
  return { detached };
}
