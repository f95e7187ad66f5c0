// readFrames (the wire format of GET /containers/{id}/logs straight from the file) against read()
// framed entry by entry: byte for byte the same, for json-file (plain, with attrs, with foreign
// layouts in the file) and local, with and without a TTY and timestamps, with filters and tails.

import assert from 'node:assert/strict';
import { appendFile } from 'node:fs/promises';
import { PassThrough, Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { rfc3339NanoFixed } from '../util/time.ts';
import { ALL, tempDirs } from './driver-suite.ts';
import { createLogDriver, type LogDriver, type LogReadOptions } from './index.ts';
import { BlockPool } from './reader.ts';

/** The reference: each entry of read() framed on its own (8-byte header unless tty, time first with timestamps). */
async function reference(driver: LogDriver, opts: LogReadOptions, tty: boolean, timestamps: boolean): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const m of driver.read(opts)) {
    const payload = timestamps ? Buffer.concat([Buffer.from(`${rfc3339NanoFixed(m.timeNano)} `), m.line]) : m.line;
    if (!tty) {
      const h = Buffer.alloc(8);
      h[0] = m.stream === 'stdout' ? 1 : 2;
      h.writeUInt32BE(payload.length, 4);
      parts.push(h);
    }
    parts.push(payload);
  }
  return Buffer.concat(parts);
}

async function framed(driver: LogDriver, opts: LogReadOptions, tty: boolean, timestamps: boolean): Promise<Buffer> {
  const parts: Buffer[] = [];
  // A batch is copied only once the next one came, as late as the contract allows: the read
  // reuses its blocks once the batch after next is asked for (the route keeps one in flight).
  let held: Buffer[] = [];
  for await (const chunks of driver.readFrames!(opts, { tty, timestamps })) {
    for (const c of held) parts.push(Buffer.from(c));
    held = chunks;
  }
  for (const c of held) parts.push(Buffer.from(c));
  return Buffer.concat(parts);
}

const variants: Array<[string, Partial<LogReadOptions>]> = [
  ['everything', {}],
  ['stderr only', { stdout: false }],
  ['the last 7', { tail: 7 }],
  ['none (tail 0)', { tail: 0 }],
];

describe('log frames straight from the file', () => {
  const newDir = tempDirs();

  for (const [kind, options] of [
    ['json-file', {}],
    ['json-file', { labels: 'a' }],
    ['json-file', { 'max-size': '20k', 'max-file': '3' }],
    ['local', {}],
  ] as Array<[string, Record<string, string>]>) {
    it(`${kind} ${JSON.stringify(options)}: the same bytes as the entries framed one by one`, async () => {
      const dir = await newDir();
      const driver = createLogDriver(kind, { containerId: 'c0ffee', dir, options, attrs: { 'label:a': 'x"y' } });
      const out = new PassThrough();
      const err = new PassThrough();
      const done = driver.attach({ stdout: out, stderr: err });
      for (let i = 0; i < 300; i++) {
        out.write(`line ${i} ${'x'.repeat(i % 97)}\n`);
        if (i % 7 === 0) err.write(`err ${i} "quoted" \\ tab\t é ✓ \u2028\n`);
        if (i % 50 === 0) out.write('y'.repeat(20_000)); // partial entries (16 KiB pieces)
        if (i % 60 === 0) out.write('\n\n'); // empty lines
      }
      out.end('no newline at the end');
      err.end();
      await done;
      for (const [what, opts] of variants)
        for (const tty of [false, true])
          for (const timestamps of [false, true]) {
            const o = { ...ALL, ...opts };
            const want = await reference(driver, o, tty, timestamps);
            assert.ok(want.length > 0 || what.includes('none'), `${what}: something to compare`);
            assert.deepEqual(await framed(driver, o, tty, timestamps), want, `${what}, tty ${tty}, timestamps ${timestamps}`);
          }
      await driver.close();
    });
  }

  for (const kind of ['json-file', 'local'])
    it(`${kind}: 3 MiB of lines of every length read back whole, records straddling the blocks read`, async () => {
      const dir = await newDir();
      const driver = createLogDriver(kind, { containerId: 'c0ffee', dir, options: {}, attrs: {} });
      const lines: string[] = [];
      for (let i = 0, size = 0; size < 3 * 1024 * 1024; i++) {
        const line = `${i} ${'abcdefgh"\\'.repeat(((i * 7919) % 3001) / 10)}${'z'.repeat((i * 31) % 10)}\n`;
        lines.push(line);
        size += line.length;
      }
      const input = Buffer.from(lines.join(''));
      await driver.attach({ stdout: Readable.from([input.subarray(0, 1_000_000), input.subarray(1_000_000)]) });
      const read: Buffer[] = [];
      for await (const m of driver.read(ALL)) read.push(m.line);
      assert.equal(read.length, lines.length);
      assert.ok(Buffer.concat(read).equals(input), 'read() gives the bytes written');
      assert.ok((await framed(driver, ALL, true, false)).equals(input), 'raw frames are the bytes written');
      assert.deepEqual(await framed(driver, ALL, false, true), await reference(driver, ALL, false, true));
      await driver.close();
    });

  for (const [kind, options] of [
    ['json-file', {}],
    ['json-file', { 'max-size': '200k', 'max-file': '50' }],
    ['local', {}],
  ] as Array<[string, Record<string, string>]>)
    it(`${kind} ${JSON.stringify(options)}: frames followed live while 3 MiB is written are the bytes written (blocks reused)`, async () => {
      const dir = await newDir();
      const driver = createLogDriver(kind, { containerId: 'c0ffee', dir, options, attrs: {} });
      const out = new PassThrough();
      const done = driver.attach({ stdout: out });
      const followed = framed(driver, { ...ALL, follow: true }, true, false);
      const parts: string[] = [];
      for (let i = 0, size = 0; size < 3 * 1024 * 1024; i++) {
        const line = `${i} ${'abcdefgh"\\'.repeat(((i * 7919) % 3001) / 10)}\n`;
        parts.push(line);
        size += line.length;
        out.write(line);
        // Let the follower catch up now and then, so it reads both small and large stretches.
        if (i % 500 === 0) await new Promise((r) => setTimeout(r, 1));
      }
      out.end();
      await done;
      await driver.close(); // ends the follower after everything
      assert.ok((await followed).equals(Buffer.from(parts.join(''))), 'the followed frames are the bytes written, once, in order');
    });

  it('the block pool reuses a block only after the batch after next is asked for, and none once it forgot them', () => {
    const pool = new BlockPool();
    const a = pool.get();
    pool.parsedChunk(a);
    pool.handedOut(true); // batch 1 holds a
    pool.resumed(); // batch 2 asked for: batch 1 may still be on the wire
    assert.notEqual(pool.get().buffer, a.buffer);
    const b = pool.get();
    pool.parsedChunk(b);
    pool.handedOut(true); // batch 2 holds b
    pool.resumed(); // batch 3 asked for: batch 1 is flushed, a is free again
    assert.equal(pool.get().buffer, a.buffer);
    pool.parsedChunk(a);
    pool.handedOut(false); // nothing handed out: a is free at once (b is still in the batch before)
    pool.forget();
    const fresh = [pool.get(), pool.get()];
    assert.ok(
      fresh.every((x) => x.buffer !== a.buffer && x.buffer !== b.buffer),
      'forgotten blocks are not reused',
    );
  });

  it('json-file lines in layouts other than ours (fields reordered, escapes) are framed like read() gives them', async () => {
    const dir = await newDir();
    const driver = createLogDriver('json-file', { containerId: 'c0ffee', dir, options: {}, attrs: {} });
    await driver.attach({ stdout: Readable.from([Buffer.from('ours\n')]) });
    await appendFile(
      driver.logPath,
      [
        '{"stream":"stderr","log":"reordered\\n","time":"2026-01-02T03:04:05.000000006Z"}',
        '{"log":"esc \\"q\\" \\u00e9 \\\\ \\t\\n","stream":"stdout","time":"2026-01-02T03:04:05.1Z"}',
        '{"log":"no newline","stream":"stdout","time":"2026-01-02T03:04:06Z"}',
        'not json at all',
        '{"log":"after the bad line\\n","stream":"stdout","time":"2026-01-02T03:04:07Z"}',
        '',
      ].join('\n'),
    );
    for (const tty of [false, true])
      for (const timestamps of [false, true])
        assert.deepEqual(await framed(driver, ALL, tty, timestamps), await reference(driver, ALL, tty, timestamps));
    await driver.close();
  });
});
