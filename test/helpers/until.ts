// Polling for end-to-end tests: wait until `fn` gives a value (errors count as "not yet"; the last
// one is named in the time-out message, so a CI log says what was still failing).

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

export async function until<T>(
  what: string,
  fn: () => Promise<T | undefined> | T | undefined,
  timeoutMs = 20_000,
  everyMs = 50,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const v = await Promise.resolve()
      .then(fn)
      .catch((err: unknown) => {
        lastError = err;
        return undefined;
      });
    if (v !== undefined) return v;
    if (Date.now() > deadline) {
      const cause =
        lastError instanceof Error
          ? `${lastError.message}${lastError.cause instanceof Error ? ` (${lastError.cause.message})` : ''}`
          : undefined;
      throw new Error(`timed out waiting for ${what}${cause ? `; last error: ${cause}` : ''}`);
    }
    await sleep(everyMs);
  }
}
