// POST /containers/{id}/attach on a fake session: the hijack (101 UPGRADED), frames without a TTY,
// only the streams asked for, stdin forwarded, the detach sequence ending the attachment, and a
// bad detach sequence refused as a plain 400 before the hijack.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { AttachSession } from '../../types/attach.ts';
import { frame } from '../stream-framing.ts';
import { registerAttachRoutes, type AttachBackend } from './attach.ts';

function session(
  tty: boolean,
  stdin?: PassThrough,
): AttachSession & { emit(c: { stream: 'stdout' | 'stderr'; data: Buffer } | null): void } {
  let fn: ((c: { stream: 'stdout' | 'stderr'; data: Buffer } | null) => void) | undefined;
  return {
    tty,
    running: () => true,
    subscribe: (f) => ((fn = f), () => (fn = undefined)),
    ...(stdin ? { stdin: () => stdin } : {}),
    closeStdin: async () => true,
    emit: (c) => fn?.(c),
  };
}

describe('attach route', () => {
  let current = session(false);
  const { backend } = fakeBackend<AttachBackend>({ attach: () => current });
  const h = new RouteHarness((r) => registerAttachRoutes(r, backend));
  after(() => h.close());

  test('without a TTY: 101 UPGRADED, multiplexed frames of the streams asked for, ended by the run', async () => {
    current = session(false);
    const s = await h.hijack('POST', '/containers/c1/attach?stream=1&stdout=1');
    assert.match(s.head, /^HTTP\/1\.1 101 UPGRADED/);
    assert.match(s.head, /Content-Type: application\/vnd\.docker\.multiplexed-stream/);
    current.emit({ stream: 'stdout', data: Buffer.from('out') });
    current.emit({ stream: 'stderr', data: Buffer.from('not asked for') });
    current.emit(null);
    assert.deepEqual(await s.rest(), frame('stdout', Buffer.from('out')));
  });

  test('with a TTY: raw bytes; stdin reaches the container until the detach sequence', async () => {
    const stdin = new PassThrough();
    current = session(true, stdin);
    const s = await h.hijack('POST', '/containers/c1/attach?stream=1&stdout=1&stdin=1&detachKeys=ctrl-x');
    assert.match(s.head, /application\/vnd\.docker\.raw-stream/);
    current.emit({ stream: 'stdout', data: Buffer.from('$ ') });
    s.socket.write('ls\n');
    await new Promise((r) => setTimeout(r, 50));
    s.socket.write(Buffer.from([0x18])); // ctrl-x
    assert.equal((await s.rest()).toString(), '$ ');
    assert.equal(stdin.read()?.toString(), 'ls\n');
  });

  test("a JSON body sent with the request (dockerode's options) is the request's, never stdin", async () => {
    const stdin = new PassThrough();
    current = session(false, stdin);
    const opts = { stream: true, stdin: true, stdout: true, stderr: true, hijack: true };
    const s = await h.hijack('POST', '/containers/c1/attach?stream=1&stdout=1&stdin=1', opts);
    assert.match(s.head, /^HTTP\/1\.1 101 UPGRADED/);
    s.socket.write('uptime; exit\n');
    await new Promise((r) => setTimeout(r, 50));
    current.emit(null);
    await s.rest();
    assert.equal(stdin.read()?.toString(), 'uptime; exit\n');
  });

  test('a bad detach sequence is a 400 before the hijack', async () => {
    const r = await h.request('POST', '/containers/c1/attach?stream=1&detachKeys=ctrl-', {});
    assert.equal(r.status, 400);
    assert.match(r.json.message, /detach/i);
  });

  test('API 1.42: the media type is raw-stream before it (still framed); the streams asked for at every version', async () => {
    current = session(false);
    const s = await h.hijack('POST', '/v1.41/containers/c1/attach?stream=1&stdout=1');
    assert.match(s.head, /Content-Type: application\/vnd\.docker\.raw-stream/);
    current.emit({ stream: 'stdout', data: Buffer.from('out') });
    current.emit({ stream: 'stderr', data: Buffer.from('not asked for') });
    current.emit(null);
    assert.deepEqual(await s.rest(), frame('stdout', Buffer.from('out')));
  });
});
