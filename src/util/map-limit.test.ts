import assert from 'node:assert/strict';
import { test } from 'node:test';
import { mapLimit } from './map-limit.ts';

test('mapLimit keeps the order and never runs more than the limit at once', async () => {
  let running = 0;
  let most = 0;
  const out = await mapLimit([5, 1, 4, 2, 3, 0, 6], 3, async (n, i) => {
    running++;
    most = Math.max(most, running);
    await new Promise((r) => setTimeout(r, n));
    running--;
    return n * 10 + i;
  });
  assert.deepEqual(out, [50, 11, 42, 23, 34, 5, 66]);
  assert.equal(most, 3);
  assert.deepEqual(await mapLimit([], 4, async () => 1), []);
});

test('mapLimit rejects with the first failure', async () => {
  await assert.rejects(
    mapLimit([1, 2, 3], 2, async (n) => {
      if (n === 2) throw new Error('two');
      return n;
    }),
    /two/,
  );
});
