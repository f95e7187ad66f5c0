import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import { createLogDriver } from './index.ts';

describe('none driver', () => {
  it('drains both streams so the container never blocks, and keeps nothing', async () => {
    const driver = createLogDriver('none', { containerId: 'n', dir: '/nonexistent', options: { whatever: '1' }, attrs: {} });
    assert.equal(driver.name, 'none');
    assert.equal(driver.logPath, '');
    const stdout = new PassThrough({ highWaterMark: 1024 });
    const stderr = new PassThrough({ highWaterMark: 1024 });
    const done = driver.attach({ stdout, stderr });
    const chunk = Buffer.alloc(64 * 1024, 0x61);
    for (let i = 0; i < 64; i++) {
      // would stall at the high-water mark if nobody read
      if (!stdout.write(chunk)) await new Promise((r) => stdout.once('drain', r));
      if (!stderr.write(chunk)) await new Promise((r) => stderr.once('drain', r));
    }
    stdout.end();
    stderr.end();
    await done;
    await driver.close();
  });

  it("refuses to read with dockerd's NotImplemented error (501)", () => {
    const driver = createLogDriver('none', { containerId: 'n', dir: '/nonexistent', options: {}, attrs: {} });
    assert.throws(
      () => driver.read({ follow: false, stdout: true, stderr: true }),
      (err: unknown) =>
        err instanceof EngineError &&
        err.code === 'NOT_IMPLEMENTED' &&
        err.status === 501 &&
        err.message === 'configured logging driver does not support reading',
    );
  });
});
