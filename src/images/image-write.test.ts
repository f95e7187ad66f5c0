// sha256Off gives sha256's digest, for buffers hashed on the loop and off it.
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { sha256, sha256Off } from './image-write.ts';

test('sha256Off equals sha256 below and above the off-loop size', async () => {
  for (const size of [0, 1000, 256 * 1024, 4 * 1024 * 1024 + 3]) {
    const b = randomBytes(size);
    assert.equal(await sha256Off(b), sha256(b), `${size} bytes`);
  }
});
