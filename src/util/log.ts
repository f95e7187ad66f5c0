// The daemon's own log: logrus-compatible text lines (what dockerd users grep for) or JSON lines
// with level, msg and time in RFC 3339 with nanoseconds.
import { nowIso } from './time.ts';

export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'fatal';
export const LOG_LEVELS: readonly LogLevel[] = ['debug', 'info', 'warn', 'error', 'fatal'];
const RANK: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3, fatal: 4 };

export interface LogOptions {
  level: LogLevel;
  format: 'text' | 'json';
  raw: boolean;
}

type Fields = Record<string, unknown>;

function quote(v: string): string {
  return /^[A-Za-z0-9_.\/:@-]+$/.test(v) ? v : JSON.stringify(v);
}

export class Logger {
  private opts: LogOptions;
  private readonly fields: Fields;
  private readonly out: NodeJS.WritableStream;

  constructor(opts: LogOptions, fields: Fields = {}, out: NodeJS.WritableStream = process.stderr) {
    this.opts = opts;
    this.fields = fields;
    this.out = out;
  }

  /** Level and format are shared by every child logger, so a reload (debug toggle) reaches them all. */
  configure(opts: Partial<LogOptions>): void {
    Object.assign(this.opts, opts);
  }

  get level(): LogLevel {
    return this.opts.level;
  }

  child(fields: Fields): Logger {
    return new Logger(this.opts, { ...this.fields, ...fields }, this.out);
  }

  enabled(level: LogLevel): boolean {
    return RANK[level] >= RANK[this.opts.level];
  }

  debug(msg: string, fields?: Fields): void {
    this.write('debug', msg, fields);
  }
  info(msg: string, fields?: Fields): void {
    this.write('info', msg, fields);
  }
  warn(msg: string, fields?: Fields): void {
    this.write('warn', msg, fields);
  }
  error(msg: string, fields?: Fields): void {
    this.write('error', msg, fields);
  }
  fatal(msg: string, fields?: Fields): void {
    this.write('fatal', msg, fields);
  }

  private write(level: LogLevel, msg: string, extra?: Fields): void {
    if (!this.enabled(level)) return;
    const fields: Fields = { ...this.fields, ...extra };
    for (const [k, v] of Object.entries(fields)) if (v instanceof Error) fields[k] = v.message;
    let line: string;
    if (this.opts.format === 'json') {
      line = JSON.stringify({ level: level === 'warn' ? 'warning' : level, msg, time: nowIso(), ...fields });
    } else {
      const lvl = level === 'warn' ? 'warning' : level;
      const parts = [`time="${nowIso()}"`, `level=${lvl}`, `msg=${JSON.stringify(msg)}`];
      for (const [k, v] of Object.entries(fields)) parts.push(`${k}=${quote(typeof v === 'string' ? v : JSON.stringify(v))}`);
      line = parts.join(' ');
    }
    this.out.write(line + '\n');
  }
}
