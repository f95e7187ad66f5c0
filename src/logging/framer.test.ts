// LineFramer: entries as dockerd's copier cuts them, whatever the read boundaries; the pieces of a
// long line (and its last piece) carry the time of its first piece.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LineFramer, MAX_ENTRY, type RecordEncoder } from './framer.ts';

interface Entry {
  text: string;
  partial: boolean;
  ts: bigint;
}

function framer(): { f: LineFramer; got: Entry[] } {
  const got: Entry[] = [];
  const enc: RecordEncoder = {
    hotLines(_s, buf, start, end, ts) {
      // As the encoders do: a line over MAX_ENTRY goes out in MAX_ENTRY partial pieces first.
      for (let i = start; i < end;) {
        const nl = buf.indexOf(10, i);
        let ls = i;
        for (; nl - ls >= MAX_ENTRY; ls += MAX_ENTRY) got.push({ text: buf.toString('latin1', ls, ls + MAX_ENTRY), partial: true, ts });
        got.push({ text: buf.toString('latin1', ls, nl + 1), partial: false, ts });
        i = nl + 1;
      }
    },
    partial(_s, buf, start, end, ts) {
      got.push({ text: buf.toString('latin1', start, end), partial: true, ts });
    },
  };
  return { f: new LineFramer(enc, 0), got };
}

describe('LineFramer', () => {
  it('a line whose first reads are exactly whole 16 KiB pieces keeps the first piece’s time to its end', () => {
    const { f, got } = framer();
    f.push(Buffer.alloc(MAX_ENTRY * 2, 'a'), 1n); // two whole pieces, nothing left pending
    f.push(Buffer.from('tail\nnext\n'), 2n);
    f.push(Buffer.alloc(MAX_ENTRY + 3, 'b'), 3n); // a new long line: its own time
    f.push(Buffer.from('\n'), 4n);
    f.end(5n);
    assert.deepEqual(
      got.map((e) => [e.text.length, e.partial, e.ts]),
      [
        [MAX_ENTRY, true, 1n],
        [MAX_ENTRY, true, 1n],
        [5, false, 1n],
        [5, false, 2n],
        [MAX_ENTRY, true, 3n],
        [4, false, 3n],
      ],
    );
  });

  it('the same entries for any read boundaries', () => {
    const text = `short\n${'x'.repeat(40_000)}\n${'y'.repeat(MAX_ENTRY)}\n\nend without newline`;
    const whole = framer();
    whole.f.push(Buffer.from(text), 1n);
    whole.f.end(1n);
    for (const size of [1, 7, 4096, MAX_ENTRY, MAX_ENTRY + 1, 65_536]) {
      const cut = framer();
      // The caller's buffer is reused after each push, as the daemon's FIFO readers do.
      const shared = Buffer.alloc(size);
      for (let i = 0; i < text.length; i += size) {
        const n = shared.write(text.slice(i, i + size), 'latin1');
        cut.f.push(shared.subarray(0, n), 1n);
        shared.fill(0x23);
      }
      cut.f.end(1n);
      assert.deepEqual(cut.got, whole.got, `reads of ${size}`);
    }
  });
});
