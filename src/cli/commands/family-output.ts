// Output and input helpers the command families share: list tables with docker's `--format`
// (`table`, a template, or `json` with the row's fields in Go's sorted-map order), inspect output,
// pretty inspect blocks, and files read from a path or `-` (stdin).
import { readFile } from 'node:fs/promises';
import { createInterface } from 'node:readline';
import type { Cli } from '../cli.ts';
import { printFormatted } from '../output.ts';
import { compile } from '../template.ts';
import type { GoType } from '../go-types.ts';
import { printInspect } from './containers.ts';
import { goValue, type InspectType } from './cluster/go-layout.ts';

/** A list's rows under --format (default: the docker table); json rows keep Go's sorted keys; `type`: the rows' Go type in the docker CLI. */
export function printRows(
  cli: Cli,
  rows: Record<string, unknown>[],
  format: string | undefined,
  table: string,
  titles: Record<string, string>,
  noTrunc = false,
  type?: GoType,
): void {
  const fmt = !format || format === 'table' ? table : format;
  if (fmt === 'json') {
    for (const r of rows) cli.out(`${goJson(sortedKeys(r))}\n`);
    return;
  }
  const items = rows;
  const fit = cli.tableFit(noTrunc);
  if (/^table(\s|$)/.test(fmt) && !fit) {
    // The header: the template run over the titles, as Go renders it (node ls's `{{if .Self}}` too).
    const t = compile(fmt, { type });
    const header = fmt.includes('{{if')
      ? t.render(Object.fromEntries(Object.keys(rows[0] ?? titles).map((k) => [k, titles[k] ?? ''])))
      : t.header(titles);
    cli.out(tabwrite([header, ...items.map((r) => t.render(r))]));
    return;
  }
  printFormatted(items, fmt, titles, (s) => cli.out(s), fit, { type });
}

/** JSON as Go's encoding/json writes it: <, > and & escaped. */
export function goJson(v: unknown): string {
  return goEscape(JSON.stringify(v));
}

/** JSON text with <, >, & and the JavaScript line separators escaped, as Go's encoder writes them. */
function goEscape(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/**
 * Go's tabwriter as the docker CLI sets it up (min width 10, padding 3): every tab-ended cell padded
 * to its column's width, the text after the last tab left as is, so a line whose last columns are
 * empty keeps its padding as docker's does.
 */
export function tabwrite(lines: string[]): string {
  const cells = lines.map((l) => l.split('\t'));
  const widths: number[] = [];
  for (const r of cells) r.forEach((c, i) => i < r.length - 1 && (widths[i] = Math.max(widths[i] ?? 0, c.length + 3, 10)));
  return cells.map((r) => `${r.map((c, i) => (i < r.length - 1 ? c.padEnd(widths[i]!) : c)).join('')}\n`).join('');
}

function sortedKeys(r: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(r).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** `inspect` output: the indented array (also for --format json), or one template line per item. */
export function printInspected(cli: Cli, items: unknown[], format: string | undefined, goType?: InspectType): void {
  const f = format === 'json' ? undefined : format;
  // Without a template the docker CLI writes the object back from its Go type (cluster/go-layout.ts).
  if (goType && !f)
    cli.out(
      `${goEscape(
        JSON.stringify(
          items.map((it) => goValue(it, goType)),
          null,
          4,
        ),
      )}\n`,
    );
  else printInspect(cli, items, f);
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
