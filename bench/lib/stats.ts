// Summary statistics for a set of timings (nearest-rank percentiles: no interpolation between runs).

export interface Summary {
  n: number;
  median: number;
  p90: number;
  min: number;
  max: number;
  mean: number;
}

export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function median(values: readonly number[]): number {
  if (values.length === 0) return NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

export function summarize(values: readonly number[]): Summary {
  return {
    n: values.length,
    median: median(values),
    p90: percentile(values, 90),
    min: values.length ? Math.min(...values) : NaN,
    max: values.length ? Math.max(...values) : NaN,
    mean: values.length ? values.reduce((a, b) => a + b, 0) / values.length : NaN,
  };
}

/** Milliseconds taken by fn, with its result. */
export async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const t0 = performance.now();
  const value = await fn();
  return { ms: performance.now() - t0, value };
}

/** Runs `warmups` unrecorded then `n` recorded iterations, one after the other. */
export async function repeat<T>(n: number, warmups: number, fn: (i: number) => Promise<T>): Promise<T[]> {
  for (let i = 0; i < warmups; i++) await fn(-1 - i);
  const out: T[] = [];
  for (let i = 0; i < n; i++) out.push(await fn(i));
  return out;
}

/** Runs `count` jobs with at most `width` in flight; resolves when all are done (first error rejects). */
export async function pool(count: number, width: number, job: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < count) await job(next++);
  };
  await Promise.all(Array.from({ length: Math.min(width, count) }, worker));
}

/**
 * Like repeat() for several contenders at once, taking turns (a, b, c, a, b, c, …) so that load
 * which comes and goes on the machine spreads over all of them instead of hitting one.
 */
export async function interleave<K extends string, T>(
  n: number,
  warmups: number,
  contenders: Record<K, () => Promise<T>>,
): Promise<Record<K, T[]>> {
  const keys = Object.keys(contenders) as K[];
  const out = Object.fromEntries(keys.map((k) => [k, [] as T[]])) as Record<K, T[]>;
  for (let i = 0; i < warmups; i++) for (const k of keys) await contenders[k]();
  for (let i = 0; i < n; i++) for (const k of keys) out[k].push(await contenders[k]());
  return out;
}
