// GET /containers/{id}/attach/ws on a fake session: the websocket handshake, output as binary
// frames (text frames before API 1.28), a close frame when the run ends; a plain GET is a 400.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { AttachSession } from '../../types/attach.ts';
import { acceptKey, OP } from '../websocket.ts';
import type { AttachBackend } from './attach.ts';
import { registerAttachWsRoutes } from './attach-ws.ts';

/** Server frames are unmasked; the short ones of this test have a one-byte length. */
function serverFrames(buf: Buffer): Array<{ opcode: number; payload: Buffer }> {
  const out: Array<{ opcode: number; payload: Buffer }> = [];
  for (let o = 0; o + 2 <= buf.length;) {
    const len = buf[o + 1]! & 0x7f;
    out.push({ opcode: buf[o]! & 0x0f, payload: buf.subarray(o + 2, o + 2 + len) });
    o += 2 + len;
  }
  return out;
}

describe('attach over a websocket', () => {
  let emit: ((c: { stream: 'stdout' | 'stderr'; data: Buffer } | null) => void) | undefined;
  const session: AttachSession = {
    tty: false,
    running: () => true,
    subscribe: (f) => ((emit = f), () => (emit = undefined)),
    closeStdin: async () => true,
  };
  const { backend } = fakeBackend<AttachBackend>({ attach: session });
  const h = new RouteHarness((r) => registerAttachWsRoutes(r, backend));
  after(() => h.close());
  const key = 'dGhlIHNhbXBsZSBub25jZQ==';
  const ws = { Upgrade: 'websocket', 'Sec-WebSocket-Key': key, 'Sec-WebSocket-Version': '13' };

  for (const [version, op] of [
    ['1.51', OP.binary],
    ['1.27', OP.text],
  ] as const) {
    test(`API ${version}: handshake, output frames (opcode ${op}), close at the end of the run`, async () => {
      const s = await h.hijack('GET', `/v${version}/containers/c1/attach/ws?stream=1&stdout=1`, undefined, ws);
      assert.match(s.head, /^HTTP\/1\.1 101/);
      assert.match(s.head, new RegExp(`Sec-WebSocket-Accept: ${acceptKey(key).replace(/[+/]/g, '\\$&')}`, 'i'));
      emit?.({ stream: 'stdout', data: Buffer.from('hi') });
      emit?.(null);
      const frames = serverFrames(await s.rest());
      assert.deepEqual(
        frames.map((f) => f.opcode),
        [op, OP.close],
      );
      assert.equal(frames[0]!.payload.toString(), 'hi');
    });
  }

  test('a request that is not a websocket is a 400', async () => {
    const r = await h.request('GET', '/containers/c1/attach/ws');
    assert.equal(r.status, 400);
  });

  test('API 1.42: only the streams asked for from, every stream before', async () => {
    for (const [version, want] of [
      ['1.42', ''],
      ['1.41', 'err'],
    ] as const) {
      const s = await h.hijack('GET', `/v${version}/containers/c1/attach/ws?stream=1&stdout=1`, undefined, ws);
      emit?.({ stream: 'stderr', data: Buffer.from('err') });
      emit?.(null);
      const data = serverFrames(await s.rest()).filter((f) => f.opcode !== OP.close);
      assert.equal(Buffer.concat(data.map((f) => f.payload)).toString(), want, version);
    }
  });
});
