// Output helpers of the CLI, matching the docker CLI's look: tab-aligned tables (Go's tabwriter
// with min width 10 and padding 3), `--format` (table or plain templates), human sizes and
// durations as go-units prints them, and short IDs.
import { UsageError } from './args.ts';
import { clipLines, fitRows } from './table-fit.ts';
import { compile, type CompileOptions } from './template.ts';

/** Aligns tab-separated rows: each column as wide as its widest cell + 3 (min `minWidth`); the last one unpadded. */
/**
 * Strings in byte order, as Go's sort.Strings and cobra order them. (Not localeCompare: under Bun
 * its ICU collator costs ~2 MiB of a command's peak RSS.)
 */
export const byteOrder = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function alignTable(rows: string[][], minWidth = 10): string {
  const widths: number[] = [];
  for (const r of rows) r.forEach((c, i) => i < r.length - 1 && (widths[i] = Math.max(widths[i] ?? 0, Math.max(c.length + 3, minWidth))));
  return (
    rows
      .map((r) =>
        r
          .map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c))
          .join('')
          .trimEnd(),
      )
      .join('\n') + (rows.length ? '\n' : '')
  );
}

/** Fitting of a table to the terminal (table-fit.ts): its width, and the titles of columns never shrunk. */
export interface Fit {
  width: number;
  fixed?: ReadonlySet<string>;
}

/** Titles of the ID columns, which keep their 12 characters when a table is fitted. */
export const ID_TITLES: ReadonlySet<string> = new Set(['CONTAINER ID', 'IMAGE ID', 'NETWORK ID', 'ID']);

/**
 * Prints items with a --format value (or the default table format): `table …` gives a header from
 * `titles` and aligned columns (fitted to `fit.width` when given); a plain template prints one line
 * per item; `json` prints each item as JSON. `how`: the command's wording of a template's failure
 * and the Go type its rows are in the docker CLI.
 */
export function printFormatted(
  items: unknown[],
  format: string,
  titles: Record<string, string>,
  out: (s: string) => void,
  fit?: Fit,
  how: Pick<CompileOptions, 'errors' | 'type'> = {},
): void {
  if (format === 'json') {
    for (const it of items) out(`${JSON.stringify(it)}\n`);
    return;
  }
  const t = compile(format, how);
  if (!t.table) {
    for (const it of items) out(`${t.render(it)}\n`);
    return;
  }
  const rows = [t.header(titles).split('\t'), ...items.map((it) => t.render(it).split('\t'))];
  const text = alignTable(rows);
  if (!fit || text.split('\n').every((l) => l.length <= fit.width)) return out(text);
  // Fitted: the 10-column minimum gives way too (3 spaces between columns remain).
  out(clipLines(alignTable(fitRows(rows, fit.width, fit.fixed ?? ID_TITLES), 0), fit.width));
}

/** go-units HumanDuration. */
export function humanDuration(ms: number): string {
  const s = Math.floor(ms / 1000);
  if (s < 1) return 'Less than a second';
  if (s === 1) return '1 second';
  if (s < 60) return `${s} seconds`;
  const m = Math.floor(s / 60);
  if (m === 1) return 'About a minute';
  if (m < 60) return `${m} minutes`;
  const h = Math.round(ms / 3_600_000);
  if (h === 1) return 'About an hour';
  if (h < 48) return `${h} hours`;
  if (h < 24 * 7 * 2) return `${Math.floor(h / 24)} days`;
  if (h < 24 * 30 * 2) return `${Math.floor(h / 24 / 7)} weeks`;
  if (h < 24 * 365 * 2) return `${Math.floor(h / 24 / 30)} months`;
  return `${Math.floor(h / 24 / 365)} years`;
}

export function ago(epochSeconds: number | undefined, now = Date.now()): string {
  if (!epochSeconds) return '';
  return `${humanDuration(now - epochSeconds * 1000)} ago`;
}

/** go-units HumanSizeWithPrecision (decimal units). */
export function humanSize(bytes: number, precision = 3): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB'];
  let v = bytes;
  let i = 0;
  while (v >= 1000 && i < units.length - 1) {
    v /= 1000;
    i++;
  }
  return `${Number(v.toPrecision(precision))}${units[i]}`;
}

/** go-units BytesSize (binary units), as stats prints memory. */
export function bytesSize(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];
  let v = bytes;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${Number(v.toPrecision(4))}${units[i]}`;
}

export function shortId(id: string | undefined): string {
  return (id ?? '').replace(/^sha256:/, '').slice(0, 12);
}

/** A Go-style `"…"` quoted and truncated cell (docker ps COMMAND). */
export function ellipsis(s: string, max: number): string {
  return s.length > max ? `${s.slice(0, max - 1)}…` : s;
}

const DURATION_UNITS: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * A --since/--until value as the docker CLI sends it (its GetTimestamp): a Go duration ("10m",
 * "1h30m") is that long before now, in unix seconds; a date ("2026-01-02", RFC 3339 with or without
 * a zone, local when it has none) is unix seconds with nanoseconds; unix seconds pass unchanged.
 */
export function timestampArg(value: string | undefined, now = Date.now()): string | undefined {
  if (value === undefined || value === '') return value;
  const parts = value !== '0' ? /^([-+]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|ms|s|m|h))+$/.exec(value) : null;
  if (parts) {
    let ms = 0;
    for (const m of value.matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|ms|s|m|h)/g)) ms += Number(m[1]) * DURATION_UNITS[m[2]!]!;
    return String(Math.floor((now - (parts[1] === '-' ? -ms : ms)) / 1000));
  }
  if (/^\d+(\.\d+)?$/.test(value)) return value;
  // A date without a time is local midnight (JavaScript would read it as UTC).
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(value) ? `${value}T00:00:00` : value);
  if (Number.isNaN(t))
    throw new UsageError(
      value.includes('-')
        ? `invalid time: ${JSON.stringify(value)}`
        : `failed to parse value as time or duration: ${JSON.stringify(value)}`,
    );
  const frac = /\.(\d+)/.exec(value.split('T')[1] ?? '')?.[1] ?? '';
  return `${Math.floor(t / 1000)}.${frac.padEnd(9, '0').slice(0, 9)}`;
}
