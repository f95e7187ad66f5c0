import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EscapeMatcher, parseDetachKeys } from './detach-keys.ts';

describe('parseDetachKeys', () => {
  it('reads the docker notation', () => {
    assert.deepEqual([...parseDetachKeys('ctrl-p,ctrl-q')], [0x10, 0x11]);
    assert.deepEqual([...parseDetachKeys('ctrl-@,ctrl-[,ctrl-\\,ctrl-],ctrl-^,ctrl-_')], [0, 27, 28, 29, 30, 31]);
    assert.deepEqual([...parseDetachKeys('a,ctrl-A,Z')], [0x61, 1, 0x5a]);
  });

  it('refuses unknown keys with a 400', () => {
    for (const bad of ['ctrl-1', 'ctrl-', 'meta-x', 'ab']) {
      assert.throws(
        () => parseDetachKeys(bad),
        (e: { status?: number; message: string }) => e.status === 400 && /Invalid detach keys/.test(e.message),
        bad,
      );
    }
  });
});

describe('EscapeMatcher', () => {
  const keys = Buffer.from([0x10, 0x11]);

  it('detaches on the sequence, split across chunks too', () => {
    const m = new EscapeMatcher(keys);
    assert.deepEqual(m.push(Buffer.from('ab\x10')), { forward: Buffer.from('ab'), detach: false });
    assert.deepEqual(m.push(Buffer.from('\x11rest')), { forward: Buffer.alloc(0), detach: true });
  });

  it('releases a broken partial match to the process, in order', () => {
    const m = new EscapeMatcher(keys);
    assert.deepEqual(m.push(Buffer.from('\x10')).forward, Buffer.alloc(0));
    assert.deepEqual(m.push(Buffer.from('x')), { forward: Buffer.from('\x10x'), detach: false });
    // A repeated first key restarts the match.
    assert.deepEqual(m.push(Buffer.from('\x10\x10\x11')), { forward: Buffer.from('\x10'), detach: true });
  });

  it('passes everything through without keys; a one-key sequence detaches at once', () => {
    assert.deepEqual(new EscapeMatcher(Buffer.alloc(0)).push(Buffer.from('\x10\x11')), { forward: Buffer.from('\x10\x11'), detach: false });
    assert.deepEqual(new EscapeMatcher(Buffer.from([1])).push(Buffer.from('a\x01b')), { forward: Buffer.from('a'), detach: true });
  });
});
