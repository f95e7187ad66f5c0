// journalctl's arguments for each read (tail, since/until as systemd timestamps, follow) and
// journal entries as log messages (priority → stream, partial pieces, bytes that are not UTF-8).
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { journalctlArgs, journalMessage } from './journal-reader.ts';

const ID = 'f'.repeat(64);
const base = { follow: false, stdout: true, stderr: true };

describe('journal reader', () => {
  test('arguments: the container match, tail, since/until with microseconds, follow without until', () => {
    assert.deepEqual(journalctlArgs(ID, base, undefined), ['--no-pager', '--quiet', '-o', 'json', '--all', `CONTAINER_ID_FULL=${ID}`]);
    assert.deepEqual(journalctlArgs(ID, { ...base, tail: 5, since: 1_700_000_000_123_456_789n, until: 1_700_000_100_000_000_001n }, '/j'), [
      '--no-pager',
      '--quiet',
      '-o',
      'json',
      '--all',
      '--directory=/j',
      '--lines=5',
      '--since=@1700000000.123456',
      '--until=@1700000100.000000',
      `CONTAINER_ID_FULL=${ID}`,
    ]);
    // journalctl --follow shows 10 lines unless told: every entry unless a tail is asked for.
    const f = journalctlArgs(ID, { ...base, follow: true, until: 5n }, undefined);
    assert.ok(f.includes('--lines=all') && f.includes('--follow') && !f.some((a) => a.startsWith('--until')));
  });

  test('entries: PRIORITY 3 is stderr, a newline unless partial, the journal realtime in ns, byte arrays', () => {
    assert.deepEqual(journalMessage({ MESSAGE: 'hi', PRIORITY: '6', __REALTIME_TIMESTAMP: '1700000000123456' }), {
      stream: 'stdout',
      line: Buffer.from('hi\n'),
      timeNano: 1_700_000_000_123_456_000n,
    });
    assert.deepEqual(
      journalMessage({ MESSAGE: [0xff, 0x41], PRIORITY: '3', CONTAINER_PARTIAL_MESSAGE: 'true', __REALTIME_TIMESTAMP: '1' }),
      {
        stream: 'stderr',
        line: Buffer.from([0xff, 0x41]),
        timeNano: 1000n,
        partial: true,
      },
    );
    assert.equal(journalMessage({ PRIORITY: '6' }), undefined);
  });
});
