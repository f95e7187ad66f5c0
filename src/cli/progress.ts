// Rendering of pull/push/build/load progress messages, as the docker CLI shows them: on a terminal,
// one line per layer id updated in place (cursor moved up to the layer's line) with a progress bar;
// otherwise plain lines, skipping the byte-count updates. Build output (`stream`) is printed as is.
// An error message ends the stream with an Error (the SDK's progress() throws it).
import type { JsonMessage } from '../types/distribution.ts';
import { humanSize } from './output.ts';
import { realStdout } from './out.ts';

type Out = NodeJS.WriteStream | { write(s: string): unknown; isTTY?: boolean; columns?: number };

/** `[=====>      ]  1.2MB/3.4MB` from progressDetail, else the daemon's own progress text. */
export function progressBar(m: JsonMessage, width = 50): string {
  const d = m.progressDetail;
  if (d && typeof d.current === 'number' && typeof d.total === 'number' && d.total > 0) {
    const filled = Math.min(width, Math.floor((width * d.current) / d.total));
    const bar = `[${'='.repeat(Math.max(0, filled - 1))}${filled > 0 && filled < width ? '>' : filled === width ? '=' : ''}${' '.repeat(width - filled)}]`;
    return `${bar} ${humanSize(d.current).padStart(8)}/${humanSize(d.total)}`;
  }
  return m.progress ?? '';
}

/** One message as a line (no newline), as jsonmessage prints it. */
export function messageLine(m: JsonMessage & { stream?: string }, tty: boolean): string | undefined {
  if (m.stream !== undefined) return undefined;
  const hasProgress =
    !!(m.progressDetail && (m.progressDetail.current !== undefined || m.progressDetail.total !== undefined)) || !!m.progress;
  if (hasProgress && !tty) return undefined;
  const prefix = m.id ? `${m.id}: ` : '';
  const bar = tty && hasProgress ? ` ${progressBar(m)}` : '';
  return m.status === undefined && !bar ? undefined : `${prefix}${m.status ?? ''}${bar}`;
}

/** Prints a progress stream; returns the messages' aux values (push digests, build image IDs). */
export async function renderProgress(messages: AsyncIterable<JsonMessage>, out: Out = realStdout()): Promise<unknown[]> {
  const tty = !!out.isTTY;
  const lines = new Map<string, number>(); // id → line index (0 = first line printed)
  let count = 0;
  const aux: unknown[] = [];
  for await (const raw of messages) {
    const m = raw as JsonMessage & { stream?: string };
    if (m.aux !== undefined) aux.push(m.aux);
    if (m.stream !== undefined) {
      out.write(m.stream);
      continue;
    }
    const line = messageLine(m, tty);
    if (line === undefined) continue;
    const cols = (out as NodeJS.WriteStream).columns ?? 0;
    const fitted = tty && cols > 1 && line.length >= cols ? line.slice(0, cols - 1) : line;
    if (tty && m.id && lines.has(m.id)) {
      const up = count - lines.get(m.id)!;
      out.write(`\x1b[${up}A\r\x1b[2K${fitted}\r\x1b[${up}B`);
      continue;
    }
    if (tty && m.id) lines.set(m.id, count);
    out.write(`${tty ? '\x1b[2K' : ''}${fitted}\n`);
    count++;
  }
  return aux;
}
