// FifoReader on real FIFOs: a quiet writer's pipe keeps its default size; a flooding writer's pipe
// is widened to 1 MiB (through perl's fcntl) and its reads are paced, without losing or
// reordering a byte.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { openOutputFifo, type FifoReader } from './fifo.ts';
import { fifoMaker } from '../../../../test/helpers/fifos.ts';

const fifo = fifoMaker('engine-fifo-');

/** How many bytes a non-blocking writer gets into the pipe while nobody reads it. */
function capacity(path: string): number {
  const w = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
  const block = Buffer.alloc(4096, 0x61);
  let total = 0;
  try {
    for (;;) total += writeSync(w, block);
  } catch (err) {
    assert.equal((err as NodeJS.ErrnoException).code, 'EAGAIN');
  } finally {
    closeSync(w);
  }
  return total;
}

/** Reads everything into `got`; `stop()` makes the next read pause the reader for good. */
function collect(r: FifoReader): { got: Buffer[]; wide: () => { reads: number; bytes: number }; stop: () => void; ended: Promise<void> } {
  const got: Buffer[] = [];
  let stopped = false;
  let wide = { reads: 0, bytes: 0 };
  r.onData = (d) => {
    got.push(Buffer.from(d));
    if (r.widened) wide = { reads: wide.reads + 1, bytes: wide.bytes + d.length };
    return !stopped;
  };
  const ended = new Promise<void>((resolve) => r.socket.once('end', () => resolve()));
  r.socket.resume();
  return { got, wide: () => wide, stop: () => (stopped = true), ended };
}

describe('FifoReader', () => {
  it('a quiet writer’s pipe keeps its default size and is read as data comes', async () => {
    const path = fifo();
    const r = openOutputFifo(path);
    const c = collect(r);
    const w = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    for (let i = 0; i < 5; i++) {
      writeSync(w, `line ${i}\n`);
      await sleep(5);
    }
    closeSync(w);
    await c.ended;
    assert.equal(Buffer.concat(c.got).toString(), [0, 1, 2, 3, 4].map((i) => `line ${i}\n`).join(''));
    assert.equal(r.widened, false);
    r.destroy();
  });

  it('a flooding writer gets a 1 MiB pipe and paced reads; every byte arrives in order', async () => {
    const path = fifo();
    const r = openOutputFifo(path);
    const c = collect(r);
    const total = 32 << 20;
    // The writer a container's shim is: 4 KiB writes as fast as the pipe takes them.
    const writer = spawn('sh', ['-c', `busybox yes 0123456789abcdefghijklmnopqrstuvwxyz | busybox head -c ${total} > '${path}'`]);
    const writerExit = new Promise((resolve) => writer.once('exit', resolve));
    await c.ended;
    assert.equal(await writerExit, 0);
    const data = Buffer.concat(c.got);
    assert.equal(data.length, total);
    const line = Buffer.from('0123456789abcdefghijklmnopqrstuvwxyz\n');
    assert.ok(data.equals(Buffer.alloc(total, line)), 'in order');
    assert.equal(r.widened, true);
    const wide = c.wide();
    assert.ok(
      wide.bytes > 0 && wide.bytes / wide.reads > 16 * 1024,
      `paced reads take what came meanwhile (${wide.reads} reads of ${wide.bytes} bytes)`,
    );
    r.destroy();
  });

  it('the widened pipe holds 1 MiB while its reader is paused', async () => {
    const path = fifo();
    const r = openOutputFifo(path);
    const c = collect(r);
    const w = openSync(path, constants.O_WRONLY | constants.O_NONBLOCK);
    const block = Buffer.alloc(4096, 0x62);
    // Enough output, fast enough, to count as a flood.
    let written = 0;
    while (!r.widened && written < 64 << 20) {
      try {
        written += writeSync(w, block);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        await sleep(0);
      }
    }
    assert.equal(r.widened, true, 'widened');
    c.stop();
    writeSync(w, 'x'); // the read that pauses the reader for good
    await sleep(20);
    closeSync(w);
    // Another writer on the same pipe: everything unread plus what fits.
    assert.ok(capacity(path) > 512 * 1024, 'more than a default pipe holds');
    r.destroy();
  });
});
