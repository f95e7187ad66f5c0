import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frame, frameHeader, writeFrame } from './stream-framing.ts';

test('frames carry the stream id and the big-endian size', () => {
  assert.deepEqual([...frameHeader('stderr', 0x01020304)], [2, 0, 0, 0, 1, 2, 3, 4]);
  assert.deepEqual([...frame('stdout', Buffer.from('hi'))], [1, 0, 0, 0, 0, 0, 0, 2, 104, 105]);
  const parts: Buffer[] = [];
  assert.equal(writeFrame({ write: (c) => (parts.push(c), true) }, 'stdout', Buffer.from('x')), true);
  assert.deepEqual(Buffer.concat(parts), frame('stdout', Buffer.from('x')));
});
