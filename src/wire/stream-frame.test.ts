// The stream frame codec: headers byte for byte, decoding across any chunking, malformed input.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { decodeFrames, encodeFrame, FrameDecoder, frameHeader, writeFrameHeader } from './stream-frame.ts';

describe('stream frames', () => {
  test('the header is the stream byte, three zeros and the big-endian size', () => {
    assert.deepEqual([...frameHeader('stderr', 0x01020304)], [2, 0, 0, 0, 1, 2, 3, 4]);
    assert.deepEqual([...encodeFrame('systemerr', Buffer.from('x'))], [3, 0, 0, 0, 0, 0, 0, 1, 0x78]);
    const out = Buffer.alloc(10, 0xff);
    writeFrameHeader(out, 2, 1, 300);
    assert.deepEqual([...out], [0xff, 0xff, 1, 0, 0, 0, 0, 0, 1, 44]);
  });

  test('frames split at every byte boundary decode to the same frames', () => {
    const all = Buffer.concat([
      encodeFrame('stdout', Buffer.from('hello\n')),
      encodeFrame('stderr', Buffer.alloc(0)),
      encodeFrame('stdin', Buffer.from('in')),
    ]);
    const whole = decodeFrames(all).map((f) => [f.stream, f.data.toString()]);
    assert.deepEqual(whole, [
      ['stdout', 'hello\n'],
      ['stderr', ''],
      ['stdin', 'in'],
    ]);
    for (let cut = 1; cut < all.length; cut++) {
      const d = new FrameDecoder();
      const got = [...d.push(all.subarray(0, cut)), ...d.push(all.subarray(cut))].map((f) => [f.stream, f.data.toString()]);
      assert.deepEqual(got, whole, `cut at ${cut}`);
      assert.equal(d.pending, 0);
    }
  });

  test('a stream byte above 3 throws; a truncated frame is reported', () => {
    assert.throws(() => new FrameDecoder().push(Buffer.from([9, 0, 0, 0, 0, 0, 0, 0])), /malformed stream: frame type 9/);
    assert.throws(() => decodeFrames(encodeFrame('stdout', Buffer.from('abc')).subarray(0, 10)), /ended inside a frame/);
  });
});
