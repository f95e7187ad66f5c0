import assert from 'node:assert/strict';
import { test } from 'node:test';
import { frame, frameHeader, logPayload, TimestampPrefixes } from './stream-framing.ts';

test('frames carry the stream id and the big-endian size', () => {
  assert.deepEqual([...frameHeader('stderr', 0x01020304)], [2, 0, 0, 0, 1, 2, 3, 4]);
  assert.deepEqual([...frame('stdout', Buffer.from('hi'))], [1, 0, 0, 0, 0, 0, 0, 2, 104, 105]);
});

test('a batch of log entries is the concatenation of their frames, with or without times, raw with a TTY', () => {
  const t1 = 1_700_000_000_123_456_789n;
  const t2 = t1 + 1n;
  const batch = [
    { stream: 'stdout' as const, line: Buffer.from('one\n'), timeNano: t1 },
    { stream: 'stderr' as const, line: Buffer.from('two\n'), timeNano: t1 },
    { stream: 'stdout' as const, line: Buffer.alloc(0), timeNano: t2 },
  ];
  assert.deepEqual(logPayload(batch, false), Buffer.concat(batch.map((m) => frame(m.stream, m.line))));
  assert.deepEqual(logPayload(batch, true), Buffer.from('one\ntwo\n'));
  const stamped = (m: (typeof batch)[number]) =>
    Buffer.concat([Buffer.from(`${m.timeNano === t1 ? '2023-11-14T22:13:20.123456789Z' : '2023-11-14T22:13:20.123456790Z'} `), m.line]);
  assert.deepEqual(logPayload(batch, false, new TimestampPrefixes()), Buffer.concat(batch.map((m) => frame(m.stream, stamped(m)))));
  assert.deepEqual(logPayload(batch, true, new TimestampPrefixes()), Buffer.concat(batch.map(stamped)));
  assert.equal(logPayload([], false).length, 0);
});
