import assert from 'node:assert/strict';
import { test } from 'node:test';
import { decodeLogEntry, encodeLogEntry, LogEntryDecoder, type LogEntry } from './log-entry.ts';

test('a LogEntry has the bytes protoc would give it', () => {
  // source "stdout", time_nano 1, line "hi", partial true: fields 1..4 in order, proto3 encoding
  const b = encodeLogEntry({ source: 'stdout', timeNano: 1n, line: Buffer.from('hi'), partial: true });
  assert.equal(b.toString('hex'), '00000010' + '0a067374646f7574' + '1001' + '1a026869' + '2001');
  const meta = encodeLogEntry({
    source: '',
    timeNano: 0n,
    line: Buffer.alloc(0),
    partial: false,
    partialMetadata: { last: true, id: 'ab', ordinal: 3 },
  });
  assert.equal(meta.toString('hex'), '0000000a' + '2a08' + '0801' + '12026162' + '1803');
});

test('entries round-trip through the stream decoder, split anywhere', () => {
  const entries: LogEntry[] = [
    { source: 'stdout', timeNano: 1_764_078_000_123_456_789n, line: Buffer.from('hello'), partial: false },
    {
      source: 'stderr',
      timeNano: -5n,
      line: Buffer.alloc(20_000, 0x61),
      partial: true,
      partialMetadata: { last: false, id: 'x', ordinal: 1 },
    },
    { source: 'stdout', timeNano: 2n, line: Buffer.from([0, 0xff, 10]), partial: false },
  ];
  const wire = Buffer.concat(entries.map(encodeLogEntry));
  for (const step of [1, 3, 7, 4096, wire.length]) {
    const d = new LogEntryDecoder();
    const got: LogEntry[] = [];
    for (let i = 0; i < wire.length; i += step) got.push(...d.push(wire.subarray(i, i + step)));
    assert.equal(d.leftover, 0);
    assert.deepEqual(got, entries);
  }
});

test('unknown fields are skipped and oversized entries refused', () => {
  // attrs = 6 (a LogAttr message) before the line
  const e = decodeLogEntry(Buffer.from('3203' + '0a016b' + '1a0178', 'hex'));
  assert.equal(e.line.toString(), 'x');
  const big = Buffer.alloc(4);
  big.writeUInt32BE(2_000_000);
  assert.throws(() => new LogEntryDecoder().push(big), /larger than/);
});
