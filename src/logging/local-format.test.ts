// The local driver's own binary format and its dockerd defaults.

import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import { collect, tempDirs } from './driver-suite.ts';
import { createLogDriver } from './index.ts';
import { fileLogConfig } from './options.ts';

describe('local format', () => {
  const newDir = tempDirs();

  it('keeps <dir>/local-logs/container.log with length-framed records', async () => {
    const dir = await newDir();
    const driver = createLogDriver('local', { containerId: 'l', dir, options: {}, attrs: {} });
    assert.equal(driver.logPath, join(dir, 'local-logs', 'container.log'));
    await driver.attach({ stdout: Readable.from([Buffer.from('hello\n')]), stderr: Readable.from([Buffer.from('bad')]) });
    await driver.close();
    const raw = await readFile(driver.logPath);
    const records: Array<{ flags: number; ts: bigint; line: string }> = [];
    for (let i = 0; i < raw.length;) {
      const len = raw.readUInt32BE(i);
      assert.equal(raw.readUInt32BE(i + 4 + len), len, 'trailing length');
      records.push({ flags: raw[i + 4]!, ts: raw.readBigUInt64BE(i + 5), line: raw.subarray(i + 13, i + 4 + len).toString() });
      i += len + 8;
    }
    records.sort((a, b) => a.line.localeCompare(b.line));
    assert.deepEqual(
      records.map((r) => [r.flags, r.line]),
      [
        [3, 'bad'], //      stderr | partial
        [0, 'hello\n'],
      ],
    );
    const read = await collect(driver);
    assert.deepEqual(read.map((m) => m.timeNano).sort(), records.map((r) => r.ts).sort());
  });

  it('keeps arbitrary bytes, invalid UTF-8 included', async () => {
    const dir = await newDir();
    const driver = createLogDriver('local', { containerId: 'l', dir, options: {}, attrs: {} });
    const bytes = Buffer.from([0xff, 0xfe, 0x00, 0xc3, 0x28, 0x0a]);
    await driver.attach({ stdout: Readable.from([bytes]) });
    const [m] = await collect(driver);
    assert.deepEqual(m!.line, bytes);
    await driver.close();
  });

  it("defaults to dockerd's 20 MiB × 5 files, compressed", async () => {
    assert.deepEqual(fileLogConfig('local', {}), { maxSize: 20 * 1024 * 1024, maxFiles: 5, compress: true });
    const dir = await newDir();
    const driver = createLogDriver('local', { containerId: 'l', dir, options: {}, attrs: {} });
    const line = Buffer.from(`${'x'.repeat(1023)}\n`);
    const chunk = Buffer.concat(Array.from({ length: 1024 }, () => line)); // 1 MiB
    await driver.attach({ stdout: Readable.from(Array.from({ length: 45 }, () => chunk)) });
    await driver.close();
    assert.deepEqual((await readdir(join(dir, 'local-logs'))).sort(), ['container.log', 'container.log.1.gz', 'container.log.2.gz']);
    const all = await collect(driver, { tail: 3 });
    assert.equal(all.length, 3);
    assert.equal((await collect(driver)).length, 45 * 1024);
  });
});
