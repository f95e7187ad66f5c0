// Tables that fit the terminal: on a TTY, `ps`, `images`, `network ls` and `volume ls` that are
// wider than the terminal shrink their widest columns until the aligned table (output.ts's
// tabwriter rules without the 10-column minimum: cell + 3 spaces, the last column unpadded) is no
// wider than the terminal, cutting cells with "…" (a quoted
// cell such as COMMAND keeps its closing quote). ID columns keep their 12 characters and no column
// goes below its title; a table that still does not fit has its lines cut at the width, so nothing
// wraps. Piped output and --no-trunc are never fitted (full lines, as docker prints them).

/** The width alignTable(rows, 0) gives rows whose cells are at most `caps` long. */
function tableWidth(caps: number[]): number {
  return caps.reduce((sum, c, i) => sum + (i < caps.length - 1 ? c + 3 : c), 0);
}

/** A cell cut to `max` characters with "…"; `"…"` quoting is kept around the cut text. */
export function cut(s: string, max: number): string {
  if (s.length <= max) return s;
  if (max <= 1) return s.slice(0, max);
  if (max >= 3 && s.length >= 2 && s.startsWith('"') && s.endsWith('"')) return `${s.slice(0, max - 2)}…"`;
  return `${s.slice(0, max - 1)}…`;
}

/**
 * Rows (the first is the header) with cells cut so that alignTable(rows, 0) fits in `width`
 * columns. `fixed` names header titles never shrunk (ID columns).
 */
export function fitRows(rows: string[][], width: number, fixed: ReadonlySet<string> = new Set()): string[][] {
  if (rows.length === 0 || width <= 0) return rows;
  const header = rows[0]!;
  const n = header.length;
  const caps = Array.from({ length: n }, (_, i) => Math.max(...rows.map((r) => (r[i] ?? '').length)));
  const mins = header.map((t, i) => (fixed.has(t) ? caps[i]! : Math.max(t.length, 4)));
  // Shrink the widest column that is above its minimum, one character at a time.
  while (tableWidth(caps) > width) {
    let best = -1;
    for (let i = 0; i < n; i++) {
      if (caps[i]! > mins[i]! && (best < 0 || caps[i]! > caps[best]!)) best = i;
    }
    if (best < 0) break;
    caps[best]!--;
  }
  return rows.map((r) => r.map((c, i) => cut(c, caps[i]!)));
}

/** Cuts each line of an aligned table at `width` (the last resort when the columns cannot shrink further). */
export function clipLines(text: string, width: number): string {
  return text
    .split('\n')
    .map((l) => (l.length > width ? l.slice(0, width) : l))
    .join('\n');
}
