// Runs an async step over a list with at most `width` steps at a time (the store's writes of one
// agent sync or one orchestrator round: etcd batches concurrent proposals).

export async function inParallel<T>(items: T[], width: number, fn: (item: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
}
