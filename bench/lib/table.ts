// A tiny table printer: GitHub-flavoured markdown with padded columns, so the same text reads well
// on a terminal and in results/latest.md. Columns after the first are right-aligned.

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, c) => Math.max(h.length, ...rows.map((r) => (r[c] ?? '').length)));
  const line = (cells: string[]) =>
    '| ' + cells.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]!) : cell.padStart(widths[c]!))).join(' | ') + ' |';
  const rule = '|' + widths.map((w, c) => (c === 0 ? '-'.repeat(w + 2) : '-'.repeat(w + 1) + ':')).join('|') + '|';
  return [line(headers), rule, ...rows.map((r) => line(headers.map((_, c) => r[c] ?? '')))].join('\n');
}

/** A number for a table cell: '—' when missing, fewer decimals as it grows. */
export function num(v: number | undefined | null, decimals?: number): string {
  if (v === undefined || v === null || !Number.isFinite(v)) return '—';
  const d = decimals ?? (Math.abs(v) >= 100 ? 0 : Math.abs(v) >= 10 ? 1 : 2);
  return v.toFixed(d);
}

export function ratio(a: number | undefined, b: number | undefined): string {
  if (a === undefined || b === undefined || !Number.isFinite(a) || !Number.isFinite(b) || b === 0) return '—';
  return `${(a / b).toFixed(2)}×`;
}
