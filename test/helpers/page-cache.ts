// How much of a file the page cache holds, as util-linux's fincore reports it (mincore(2) per page).
import { execFileSync } from 'node:child_process';

/** Bytes of `file` resident in the page cache. */
export function cachedBytes(file: string): number {
  const out = execFileSync('fincore', ['--bytes', '--noheadings', '--output', 'RES', file], { encoding: 'utf8' });
  return Number(out.trim());
}
