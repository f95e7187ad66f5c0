// Reading a container's entries back from the journal, as dockerd's journald driver does (it is a
// log reader: `docker logs` works with cache-disabled=true): `journalctl -o json` matched on
// CONTAINER_ID_FULL, from the journal's own realtime stamps, PRIORITY 3 as stderr (else stdout),
// MESSAGE with a newline unless CONTAINER_PARTIAL_MESSAGE=true. tail counts entries of both
// streams (sd_journal_previous_skip), since/until by the entry's time. ENGINE_TEST_JOURNAL_DIR
// names the directory of a test's private journal (dockerd's journalReadDir).
import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import type { LogMessage, LogReadOptions } from '../types.ts';

export function journalDirectory(): string | undefined {
  return process.env.ENGINE_TEST_JOURNAL_DIR || undefined;
}

/** A time in ns as systemd's timestamp syntax: `@seconds.microseconds`. */
function at(ns: bigint): string {
  const us = ns / 1000n;
  return `@${us / 1_000_000n}.${String(us % 1_000_000n).padStart(6, '0')}`;
}

export interface JournalFollowEnd {
  /** Settles when the driver closed: following ends once `caughtUp` sees the last entry (or a grace passes). */
  closed: Promise<void>;
  /** Whether this entry is the last one the driver sent. */
  caughtUp: (fields: Record<string, unknown>) => boolean;
}

/** journalctl's arguments for a read. */
export function journalctlArgs(containerId: string, opts: LogReadOptions, dir = journalDirectory()): string[] {
  const args = ['--no-pager', '--quiet', '-o', 'json', '--all'];
  if (dir) args.push(`--directory=${dir}`);
  const tail = opts.tail ?? -1;
  if (tail >= 0 || opts.follow) args.push(`--lines=${tail >= 0 ? tail : 'all'}`);
  if (opts.since !== undefined && opts.since > 0n) args.push(`--since=${at(opts.since)}`);
  if (opts.until !== undefined && opts.until > 0n && !opts.follow) args.push(`--until=${at(opts.until)}`);
  if (opts.follow) args.push('--follow');
  args.push(`CONTAINER_ID_FULL=${containerId}`);
  return args;
}

/** One journal entry (journalctl's JSON) as a log message; undefined for entries without MESSAGE. */
export function journalMessage(fields: Record<string, unknown>): LogMessage | undefined {
  const m = fields['MESSAGE'];
  if (m === undefined || m === null) return undefined;
  // journalctl gives a value that is not valid UTF-8 as an array of its bytes
  const text = Array.isArray(m) ? Buffer.from(m as number[]) : Buffer.from(String(m));
  const partial = fields['CONTAINER_PARTIAL_MESSAGE'] === 'true';
  return {
    stream: fields['PRIORITY'] === '3' ? 'stderr' : 'stdout',
    line: partial ? text : Buffer.concat([text, Buffer.from('\n')]),
    timeNano: BigInt(String(fields['__REALTIME_TIMESTAMP'] ?? '0')) * 1000n,
    ...(partial ? { partial: true } : {}),
  };
}

/** How long following waits for the last entry after the driver closed. */
const CLOSE_GRACE_MS = 2000;

export async function* readJournal(
  containerId: string,
  opts: LogReadOptions,
  signal?: AbortSignal,
  end?: JournalFollowEnd,
): AsyncIterable<LogMessage> {
  const child = spawn('journalctl', journalctlArgs(containerId, opts), { stdio: ['ignore', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr += d.toString()).length > 4096 && (stderr = stderr.slice(-4096)));
  const exited = new Promise<number | null>((resolve) => {
    child.on('close', (code) => resolve(code));
    child.on('error', (err) => ((stderr += err.message), resolve(-1)));
  });
  const stop = () => child.kill();
  signal?.addEventListener('abort', stop, { once: true });
  let ended = false;
  let graceTimer: NodeJS.Timeout | undefined;
  if (opts.follow && end)
    void end.closed.then(() => {
      ended = true;
      graceTimer = setTimeout(stop, CLOSE_GRACE_MS);
    });
  let stopped = false;
  try {
    for await (const line of createInterface({ input: child.stdout, crlfDelay: Infinity })) {
      if (!line) continue;
      let fields: Record<string, unknown>;
      try {
        fields = JSON.parse(line) as Record<string, unknown>;
      } catch {
        continue; // not an entry (journalctl prints only JSON lines with -o json --quiet)
      }
      const msg = journalMessage(fields);
      if (msg && opts.until !== undefined && opts.until > 0n && msg.timeNano > opts.until) {
        stopped = true;
        break;
      }
      if (msg && (msg.stream === 'stdout' ? opts.stdout : opts.stderr)) yield msg;
      if (ended && end?.caughtUp(fields)) {
        stopped = true;
        break;
      }
    }
    if (!stopped) {
      const code = await exited;
      if (code !== 0 && !signal?.aborted && !ended) throw new Error(`reading the journal: journalctl exited ${code}: ${stderr.trim()}`);
    }
  } finally {
    clearTimeout(graceTimer);
    signal?.removeEventListener('abort', stop);
    stop();
  }
}
