import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, test } from 'node:test';
import { acceptKey, closeFrame, encodeFrame, FrameParser, OP, ProtocolError } from './websocket.ts';

/** A client frame: masked, optionally not final. */
function clientFrame(opcode: number, payload: Buffer, fin = true): Buffer {
  const mask = randomBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0, 0x80 | len]) : len < 65536 ? Buffer.alloc(4) : Buffer.alloc(10);
  if (len >= 126 && len < 65536) {
    head[1] = 0x80 | 126;
    head.writeUInt16BE(len, 2);
  }
  if (len >= 65536) {
    head[1] = 0x80 | 127;
    head.writeBigUInt64BE(BigInt(len), 2);
  }
  head[0] = (fin ? 0x80 : 0) | opcode;
  const body = Buffer.from(payload.map((b, i) => b ^ mask[i & 3]!));
  return Buffer.concat([head, mask, body]);
}

describe('websocket framing', () => {
  test('the accept key of RFC 6455 §1.3', () => {
    assert.equal(acceptKey('dGhlIHNhbXBsZSBub25jZQ=='), 's3pPLMBiTxaQ9kYGzzhZRbK+xOo=');
  });

  test('server frames: lengths in 7, 16 and 64 bits, unmasked', () => {
    assert.deepEqual([...encodeFrame(OP.binary, Buffer.from('hi'))], [0x82, 2, 0x68, 0x69]);
    const mid = encodeFrame(OP.binary, Buffer.alloc(300));
    assert.deepEqual([mid[0], mid[1], mid.readUInt16BE(2), mid.length], [0x82, 126, 300, 304]);
    const big = encodeFrame(OP.text, Buffer.alloc(70000));
    assert.deepEqual([big[0], big[1], Number(big.readBigUInt64BE(2)), big.length], [0x81, 127, 70000, 70010]);
    assert.deepEqual([...closeFrame(1000)], [0x88, 2, 0x03, 0xe8]);
  });

  test('client frames: unmasked, split across chunks, fragmented, with control frames between', () => {
    const p = new FrameParser();
    const whole = Buffer.concat([
      clientFrame(OP.text, Buffer.from('hel'), false),
      clientFrame(OP.ping, Buffer.from('p')),
      clientFrame(OP.continuation, Buffer.from('lo')),
      clientFrame(OP.binary, Buffer.alloc(70000, 7)),
      clientFrame(OP.close, Buffer.from([3, 232])),
    ]);
    const got = [];
    for (let i = 0; i < whole.length; i += 1000) got.push(...p.push(whole.subarray(i, i + 1000)));
    assert.deepEqual(
      got.map((m) => [m.opcode, m.payload.length]),
      [
        [OP.ping, 1],
        [OP.text, 5],
        [OP.binary, 70000],
        [OP.close, 2],
      ],
    );
    assert.equal(got[1]!.payload.toString(), 'hello');
    assert.equal(
      got[2]!.payload.every((b) => b === 7),
      true,
    );
    assert.throws(() => new FrameParser().push(Buffer.from([0x82, 0x01, 0x41])), ProtocolError);
  });
});
