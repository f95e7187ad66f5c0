// The CLI's standard output and error. Under Bun (the compiled `engine`), process.stdout and
// process.stderr are streams built on first use, and building them loads node:tty, node:net and
// node:stream (measured: ~6 MiB of a command's 40 MiB peak RSS); a table or a line goes instead
// through Bun's file sinks, written and flushed at once. Code that needs a real stream (attach,
// progress, pipelines, resize events) asks for it with realStdout()/realStderr(): the sinks are
// flushed first and every later write goes to the streams, so the order of the output is kept.
// Under Node these are process.stdout and process.stderr throughout. readTextIfExists reads a small
// file (config, context metadata) without node:fs under Bun (another ~4 MiB) through Bun.mmap.
// (The bundle loads a builtin on first use: under Bun node:fs is never loaded here.)
import { existsSync, readFileSync } from 'node:fs';

interface FileSink {
  write(chunk: string | Uint8Array): number;
  flush(): number | Promise<number>;
}
interface BunApi {
  stdout: { writer(): FileSink };
  stderr: { writer(): FileSink };
  mmap(path: string): Uint8Array;
}

const BUN = (globalThis as { Bun?: BunApi }).Bun;

let sinks: { out: FileSink; err: FileSink } | undefined;
/** Whether the real streams are in use (always under Node; under Bun once asked for). */
let streams = !BUN;
let pending: Promise<unknown> = Promise.resolve();

function sink(which: 'out' | 'err'): FileSink {
  sinks ??= { out: BUN!.stdout.writer(), err: BUN!.stderr.writer() };
  return sinks[which];
}

/** Writes to the stream or the sink; a promise when a sink is left writing in the background. */
function write(which: 'out' | 'err', s: string | Uint8Array): Promise<number> | undefined {
  if (streams) {
    (which === 'out' ? process.stdout : process.stderr).write(s);
    return undefined;
  }
  const w = sink(which);
  w.write(s);
  const done = w.flush();
  if (typeof done === 'number') return undefined;
  // A full pipe: the rest is written in the background, in order; flushOutput() waits for it.
  pending = pending.then(() => done);
  return done;
}

export const writeOut = (s: string): void => void write('out', s);
export const writeErr = (s: string): void => void write('err', s);

/**
 * A container's output (attach, exec) as it comes: through the sinks too while no stream is in use,
 * so a run whose container prints never builds process.stdout under Bun (~10 ms of CPU). The
 * promise, when there is one, settles once a full pipe has taken the bytes: the copy waits for it,
 * and a slow reader holds back the reading of the connection.
 */
export function writeOutput(which: 'out' | 'err', b: Uint8Array): Promise<number> | undefined {
  return write(which, b);
}

/** Switches to the real streams, the sinks' output written first. */
function useStreams(): void {
  if (streams) return;
  streams = true;
  if (sinks) for (const w of [sinks.out, sinks.err]) void w.flush();
}

/** process.stdout, for what needs a stream; later writeOut() calls follow it there. */
export function realStdout(): NodeJS.WriteStream {
  useStreams();
  return process.stdout;
}

/** process.stderr, likewise. */
export function realStderr(): NodeJS.WriteStream {
  useStreams();
  return process.stderr;
}

/** Resolves once everything written through the sinks has reached its file descriptor. */
export function flushOutput(): Promise<void> {
  return pending.then(() => undefined);
}

/** Whether standard output is a terminal, without building process.stdout under Bun. */
export function stdoutIsTty(): boolean {
  if (streams) return !!process.stdout.isTTY;
  const binding = (process as unknown as { binding(name: string): { isTTY(fd: number): boolean } }).binding;
  return binding('tty_wrap').isTTY(1);
}

/** The terminal's width (0 when standard output is no terminal). */
export function stdoutColumns(): number {
  return stdoutIsTty() ? (realStdout().columns ?? 0) : 0;
}

/** A small file's text, or undefined when it does not exist. */
export function readTextIfExists(path: string): string | undefined {
  if (!BUN) return existsSync(path) ? readFileSync(path, 'utf8') : undefined;
  try {
    return new TextDecoder().decode(BUN.mmap(path));
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    if (code === 'EINVAL') return ''; // an empty file cannot be mapped
    throw e;
  }
}
