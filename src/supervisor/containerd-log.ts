// containerd's stderr (logrus text format) → the daemon's logger: each line parsed as logfmt, its
// level mapped (containerd's chatter at info and its expected warnings go to debug), raw output
// (panics) logged as warnings; the last lines are kept for the message of a failed start.

import type { ChildProcess } from 'node:child_process';
import readline from 'node:readline';
import type { Logger, LogLevel } from '../util/log.ts';

export interface ParsedLogLine {
  level: string;
  msg: string;
  fields: Record<string, string>;
}

/** Parses a logfmt line: key=value or key="quoted \"value\""; null if it has no level. */
export function parseLogfmt(line: string): ParsedLogLine | null {
  const fields: Record<string, string> = {};
  const re = /([A-Za-z0-9_.\-]+)=("(?:[^"\\]|\\.)*"|\S*)/g;
  let m: RegExpExecArray | null;
  while ((m = re.exec(line))) {
    let v = m[2]!;
    if (v.startsWith('"')) {
      try {
        v = JSON.parse(v);
      } catch {
        v = v.slice(1, -1); // Go's %q escapes that JSON lacks (\x..); keep them verbatim
      }
    }
    fields[m[1]!] = v;
  }
  if (!fields.level) return null;
  const { level, msg = '', time: _time, ...rest } = fields;
  return { level, msg, fields: rest };
}

// Warnings containerd 1.6 prints in normal operation (notes §1, §4).
const NOISY_WARNINGS = [
  /devmapper not configured/,
  /could not use snapshotter devmapper/,
  /cleaning up after shim disconnected/,
  /cleanup warnings/,
  /failed to load plugin io\.containerd\.snapshotter\.v1\.(aufs|btrfs|zfs)/,
];

export function mapLevel(parsed: ParsedLogLine): LogLevel {
  switch (parsed.level) {
    case 'trace':
    case 'debug':
      return 'debug';
    // containerd narrates every plugin it loads and every shim it starts at info level; at our
    // info level that would drown the daemon's own lines, so only its start/serve lines stay info.
    case 'info':
      return /containerd successfully booted|serving\.\.\.|starting containerd/.test(parsed.msg) ? 'info' : 'debug';
    case 'warning':
    case 'warn': {
      const text = `${parsed.msg} ${parsed.fields.error ?? ''}`;
      return NOISY_WARNINGS.some((re) => re.test(text)) ? 'debug' : 'warn';
    }
    default:
      return 'error'; // error, fatal, panic: containerd's fatal is not ours
  }
}

/** Forwards each containerd process's stderr to the logger, keeping its last 10 lines. */
export class ContainerdStderr {
  private readonly recentLines: string[] = [];

  constructor(private readonly log: Logger) {}

  forward(child: ChildProcess): void {
    const rl = readline.createInterface({ input: child.stderr!, crlfDelay: Infinity });
    rl.on('line', (line) => {
      this.recentLines.push(line);
      if (this.recentLines.length > 10) this.recentLines.shift();
      const parsed = parseLogfmt(line);
      if (!parsed) {
        this.log.warn(line); // panics and other raw output
        return;
      }
      const level = mapLevel(parsed);
      if (this.log.enabled(level)) this.log[level](parsed.msg, parsed.fields);
    });
  }

  /** The last lines, as the tail of an error message ('' when there were none). */
  recent(): string {
    return this.recentLines.length ? `; last output:\n${this.recentLines.join('\n')}` : '';
  }
}
