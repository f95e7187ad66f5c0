// The window of a virtualised list: which rows to render for a scroll position, so a table of
// thousands of containers keeps a few dozen rows in the DOM, and which of them stream live stats. Pure.

export interface RowWindow {
  first: number; // index of the first rendered row
  last: number; // one past the last rendered row
  offset: number; // px from the top of the list to the first rendered row
  total: number; // px height of the whole list
}

export function rowWindow(scrollTop: number, viewport: number, rowHeight: number, count: number, overscan = 8): RowWindow {
  const total = count * rowHeight;
  const first = Math.max(0, Math.min(count, Math.floor(Math.max(0, scrollTop) / rowHeight) - overscan));
  const last = Math.max(first, Math.min(count, Math.ceil((Math.max(0, scrollTop) + Math.max(0, viewport)) / rowHeight) + overscan));
  return { first, last, offset: first * rowHeight, total };
}

/**
 * The rows that get a live stats stream: the running ones among the rows in view (no overscan),
 * at most `cap`, so a tall window over a thousand running containers opens `cap` streams, not more.
 */
export function streamedRows<R extends { Id: string; State: string }>(
  rows: readonly R[],
  scrollTop: number,
  viewport: number,
  rowHeight: number,
  cap: number,
): string[] {
  const top = Math.max(0, scrollTop);
  const first = Math.floor(top / rowHeight);
  const last = Math.min(rows.length, Math.ceil((top + Math.max(0, viewport)) / rowHeight));
  const out: string[] = [];
  for (let i = first; i < last && out.length < cap; i++) if (rows[i]!.State === 'running') out.push(rows[i]!.Id);
  return out;
}
