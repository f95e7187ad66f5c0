// Output and input helpers the command families share: list tables with docker's `--format`
// (`table`, a template, or `json` with the row's fields in Go's sorted-map order), inspect output,
// pretty inspect blocks, and files read from a path or `-` (stdin).
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Cli } from '../cli.ts';
import { alignTable, printFormatted } from '../output.ts';
import { compile } from '../template.ts';
import { printInspect } from './containers.ts';

/** A list's rows under --format (default: the docker table); json rows keep Go's sorted keys. */
export function printRows(
  cli: Cli,
  rows: Record<string, unknown>[],
  format: string | undefined,
  table: string,
  titles: Record<string, string>,
  noTrunc = false,
): void {
  const fmt = !format || format === 'table' ? table : format;
  if (fmt === 'json') {
    for (const r of rows) cli.out(`${goJson(sortedKeys(r))}\n`);
    return;
  }
  const items = rows;
  if (/^table\s/.test(fmt) && fmt.includes('{{if')) {
    // A header with actions (node ls's `{{if .Self}}`): the template run over the titles, as Go renders it.
    const t = compile(fmt);
    const header = t.render(Object.fromEntries(Object.keys(rows[0] ?? titles).map((k) => [k, titles[k] ?? ''])));
    cli.out(alignTable([header, ...items.map((r) => t.render(r))].map((l) => l.split('\t'))));
    return;
  }
  printFormatted(items, fmt, titles, (s) => cli.out(s), cli.tableFit(noTrunc));
}

/** JSON as Go's encoding/json writes it: <, > and & escaped. */
export function goJson(v: unknown): string {
  return JSON.stringify(v).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function sortedKeys(r: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `inspect` output: the indented array (also for --format json), or one template line per item. */
export function printInspected(cli: Cli, items: unknown[], format: string | undefined): void {
  printInspect(cli, items, format === 'json' ? undefined : format);
}

/** The bytes of a file argument, `-` meaning stdin. */
export async function readSource(path: string): Promise<Buffer> {
  if (path !== '-') return readFile(path);
  const chunks: Buffer[] = [];
  for await (const c of process.stdin) chunks.push(c as Buffer);
  return Buffer.concat(chunks);
}

/** Labels as `k=v` joined by commas (list columns). */
export function labelText(labels: Record<string, string> | undefined): string {
  return Object.entries(labels ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}

/** A Go time (RFC 3339) as epoch seconds; 0 when absent. */
export function epoch(t: unknown): number {
  const ms = typeof t === 'string' ? Date.parse(t) : NaN;
  return Number.isFinite(ms) ? Math.floor(ms / 1000) : 0;
}

/** prompt.Confirm: the question with ` [y/N] `, a `y` or `yes` line from stdin to go on. */
export async function confirm(cli: Cli, question: string): Promise<boolean> {
  cli.out(`${question} [y/N] `);
  const rl = createInterface({ input: process.stdin, terminal: false });
  try {
    for await (const line of rl) return /^y(es)?$/i.test(line.trim());
    return false;
  } finally {
    rl.close();
  }
}
