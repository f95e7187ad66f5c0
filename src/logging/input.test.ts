// The synchronous input the daemon's FIFO readers feed (attachInput): the file drivers' own open()
// and the PassThrough adapter for drivers without it, each given views of one reused buffer as the
// readers hand them over; backpressure; close() with inputs still open.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ALL, collect, tempDirs, text, waitFor } from './driver-suite.ts';
import { attachInput, createLogDriver, type LogDriver, type LogStream } from './index.ts';

/** The driver without its open(): attachInput falls back to the PassThrough adapter. */
function withoutOpen(driver: LogDriver): LogDriver {
  return {
    name: driver.name,
    logPath: driver.logPath,
    attach: (s) => driver.attach(s),
    read: (o, sig) => driver.read(o, sig),
    close: () => driver.close(),
  };
}

/** Feeds `data` to the input in `piece`-byte reads through one shared buffer scribbled over after each write. */
async function feed(
  input: ReturnType<typeof attachInput>['input'],
  stream: LogStream,
  data: Buffer,
  piece: number,
  shared: Buffer,
): Promise<void> {
  for (let i = 0; i < data.length; i += piece) {
    const n = data.copy(shared, 0, i, Math.min(i + piece, data.length));
    const more = input.write(stream, shared.subarray(0, n));
    shared.fill(0x23); // the next read reuses the buffer at once
    if (!more) await input.writable(stream);
  }
}

describe('log input (attachInput)', () => {
  const newDir = tempDirs();
  const subjects: Array<[string, (dir: string) => LogDriver]> = [
    ['json-file', (dir) => createLogDriver('json-file', { containerId: 'c0ffee', dir, options: {}, attrs: {} })],
    ['local', (dir) => createLogDriver('local', { containerId: 'c0ffee', dir, options: {}, attrs: {} })],
    [
      'json-file through the stream adapter',
      (dir) => withoutOpen(createLogDriver('json-file', { containerId: 'c0ffee', dir, options: {}, attrs: {} })),
    ],
  ];

  for (const [name, make] of subjects) {
    it(`${name}: views of one reused buffer arrive intact, lines split across reads, a long line in 16 KiB pieces, the tail partial`, async () => {
      const driver = make(await newDir());
      if (name.includes('adapter')) assert.equal(driver.open, undefined);
      else assert.equal(typeof driver.open, 'function');
      const { input, done } = attachInput(driver, { stdout: true, stderr: true });
      const out = Array.from({ length: 2000 }, (_, i) => `out ${i} ${'o'.repeat(i % 61)} "q" <t> é\n`);
      const err = Array.from({ length: 500 }, (_, i) => `err ${i}\n`);
      const shared = Buffer.alloc(4096);
      await feed(input, 'stdout', Buffer.from(out.join('')), 1000, shared);
      await feed(input, 'stderr', Buffer.from(err.join('')), 333, shared);
      await feed(input, 'stdout', Buffer.from(`${'L'.repeat(40_000)}\nno newline`), 4096, shared);
      input.end('stdout');
      input.end('stdout'); // idempotent
      input.end('stderr');
      await done;
      const all = await collect(driver);
      assert.deepEqual(text(all.filter((m) => m.stream === 'stderr')), err);
      const stdout = all.filter((m) => m.stream === 'stdout');
      assert.deepEqual(text(stdout.slice(0, out.length)), out);
      const rest = stdout.slice(out.length);
      assert.deepEqual(
        rest.map((m) => [m.line.length, m.partial === true]),
        [
          [16_384, true],
          [16_384, true],
          [40_000 - 32_768 + 1, false],
          [10, true],
        ],
      );
      assert.equal(rest[0]!.timeNano, rest[2]!.timeNano, 'the pieces of a line share its first piece’s time');
      assert.equal(text(rest).join(''), `${'L'.repeat(40_000)}\nno newline`);
      await driver.close();
    });

    it(`${name}: close() ends inputs still open; what came before is kept, later writes are dropped`, async () => {
      const driver = make(await newDir());
      const { input, done } = attachInput(driver, { stdout: true, stderr: true });
      input.write('stdout', Buffer.from('kept\npartial'));
      await waitFor(async () => (await collect(driver)).length === 1);
      await driver.close();
      await done;
      assert.equal(input.write('stdout', Buffer.from('dropped\n')), true, 'a closed driver never asks the reader to wait');
      input.end('stdout');
      assert.deepEqual(text(await collect(driver, ALL)), ['kept\n', 'partial']);
    });
  }

  it('json-file: write() asks for a pause past 8 MiB queued, writable() settles once the disk caught up', async () => {
    const driver = createLogDriver('json-file', { containerId: 'c0ffee', dir: await newDir(), options: {}, attrs: {} });
    const { input, done } = attachInput(driver, { stdout: true, stderr: false });
    const piece = Buffer.from(`${'x'.repeat(99)}\n`.repeat(640)); // 64 000 bytes of lines
    let writes = 0;
    // Synchronously, before any write to the file can finish: the queue only grows.
    while (input.write('stdout', piece)) if (++writes > 1000) break;
    assert.ok(writes > 50 && writes < 200, `paused after ${writes} reads of 64 000 bytes (json adds ~60 bytes a line)`);
    await input.writable('stdout');
    assert.equal(input.write('stdout', piece), true, 'room again');
    input.end('stdout');
    await done;
    assert.equal((await collect(driver)).length, (writes + 2) * 640);
    await driver.close();
  });
});
