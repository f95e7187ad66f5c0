// The window of a virtualised list: which rows to render for a scroll position, so a table of
// thousands of containers keeps a few dozen rows in the DOM. Pure.

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
