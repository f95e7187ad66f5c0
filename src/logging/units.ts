// Go-compatible value parsing for log-opts: go-units' FromHumanSize / RAMInBytes and strconv.ParseBool.

import { invalidParameter } from '../errors.ts';

const SIZE_RE = /^(\d+(?:\.\d+)*) ?([kmgtp])?i?b?$/i;
const DECIMAL: Record<string, number> = { k: 1e3, m: 1e6, g: 1e9, t: 1e12, p: 1e15 };
const BINARY: Record<string, number> = { k: 2 ** 10, m: 2 ** 20, g: 2 ** 30, t: 2 ** 40, p: 2 ** 50 };

/** '10m' → 10000000 (decimal units, like dockerd's max-size); '-1' → -1 (unlimited). */
export function parseSize(text: string, binary = false): number {
  if (text.trim() === '-1') return -1;
  const m = SIZE_RE.exec(text);
  const value = m ? Number(m[1]) : Number.NaN;
  if (!m || !Number.isFinite(value)) throw invalidParameter(`invalid size: '${text}'`);
  const unit = m[2]?.toLowerCase();
  const mul = unit ? (binary ? BINARY : DECIMAL)[unit]! : 1;
  return Math.trunc(value * mul);
}

/** Go's strconv.ParseBool. */
export function parseBool(text: string): boolean | undefined {
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  return undefined;
}
