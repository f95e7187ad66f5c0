// Maps over many items with at most `limit` calls in flight. Starting thousands of requests to
// containerd at once (a `docker ps -s` of 1 500 containers) serialises every one of them in a single
// turn of the event loop: ~0.5 s during which no other request is answered.

/** Like Promise.all(items.map(fn)), results in order, with at most `limit` calls of fn running. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i]!, i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
