// OutputHub with real FIFOs (FifoReader): readers wait for the run's log input, every byte reaches
// it in order through the shared read buffer (with pauses when it asks for them), attached
// listeners get their own copies and the end of the run, and release() leaves unread bytes in the
// pipe for the next reader.

import assert from 'node:assert/strict';
import { closeSync, constants, openSync, writeSync } from 'node:fs';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { LogInput, LogStream } from '../../../logging/index.ts';
import { openOutputFifo } from './fifo.ts';
import { OutputHub, type OutputChunk } from './output-hub.ts';
import { fifoMaker } from '../../../../test/helpers/fifos.ts';

const fifo = fifoMaker('engine-hub-');

/** A log input that keeps copies of what it gets; pauses the reader every `pauseEvery` writes. */
function recorder(pauseEvery = 0): LogInput & { got: Record<LogStream, Buffer[]>; ends: LogStream[]; pauses: number } {
  let writes = 0;
  const rec = {
    got: { stdout: [] as Buffer[], stderr: [] as Buffer[] },
    ends: [] as LogStream[],
    pauses: 0,
    write(stream: LogStream, data: Buffer): boolean {
      rec.got[stream].push(Buffer.from(data));
      if (pauseEvery > 0 && ++writes % pauseEvery === 0) {
        rec.pauses++;
        return false;
      }
      return true;
    },
    writable: () => sleep(2),
    end(stream: LogStream): void {
      rec.ends.push(stream);
    },
  };
  return rec;
}

describe('OutputHub', () => {
  it('reads each FIFO into the run’s log input (started once it is connected), copies to listeners, ends the run', async () => {
    const hub = new OutputHub();
    hub.reset();
    const [outPath, errPath] = [fifo(), fifo()];
    const out = openOutputFifo(outPath);
    const err = openOutputFifo(errPath);
    const seen: Array<OutputChunk | null> = [];
    hub.subscribe((c) => seen.push(c));
    const done = Promise.all([hub.pump(out, 'stdout'), hub.pump(err, 'stderr')]);
    // A writer of 4 MiB in 4 KiB writes, as a shim forwards a container's output.
    const payload = Buffer.alloc(4 << 20);
    for (let i = 0; i < payload.length; i++) payload[i] = i % 100 === 99 ? 10 : 0x41 + (i % 26);
    const w = openSync(outPath, constants.O_RDWR | constants.O_NONBLOCK);
    const e = openSync(errPath, constants.O_RDWR | constants.O_NONBLOCK);
    writeSync(e, 'to stderr\n');
    let off = 0;
    // Nothing is read before the input is connected: the pipe fills and refuses more.
    try {
      while (off < payload.length) off += writeSync(w, payload, off, Math.min(4096, payload.length - off));
    } catch (x) {
      assert.equal((x as NodeJS.ErrnoException).code, 'EAGAIN');
    }
    await sleep(20);
    assert.ok(off < payload.length && seen.length === 0, 'nothing read before connect()');
    const input = recorder(7);
    hub.connect(input);
    while (off < payload.length) {
      try {
        off += writeSync(w, payload, off, Math.min(4096, payload.length - off));
      } catch (x) {
        if ((x as NodeJS.ErrnoException).code !== 'EAGAIN') throw x;
        await sleep(1);
      }
    }
    closeSync(w);
    closeSync(e);
    await done;
    assert.ok(Buffer.concat(input.got.stdout).equals(payload), 'every byte, in order');
    assert.equal(Buffer.concat(input.got.stderr).toString(), 'to stderr\n');
    assert.ok(input.pauses > 0, 'the reader paused when asked and went on');
    assert.deepEqual(input.ends.sort(), ['stderr', 'stdout']);
    const chunks = seen.filter((c): c is OutputChunk => c !== null);
    assert.ok(Buffer.concat(chunks.filter((c) => c.stream === 'stdout').map((c) => c.data)).equals(payload), 'listeners get copies');
    assert.equal(seen.at(-1), null, 'the end of the run');
    assert.equal(seen.filter((c) => c === null).length, 1);
  });

  it('release() stops reading: what was read went to the input, the rest stays in the pipe', async () => {
    const hub = new OutputHub();
    const path = fifo();
    const input = recorder();
    hub.connect(input);
    const w = openSync(path, constants.O_RDWR | constants.O_NONBLOCK); // keeps the pipe alive
    const done = hub.pump(openOutputFifo(path), 'stdout');
    writeSync(w, 'before\n');
    while (input.got.stdout.length === 0) await sleep(2);
    hub.release();
    await done;
    assert.deepEqual(input.ends, ['stdout']);
    writeSync(w, 'after\n');
    const next = new OutputHub();
    const input2 = recorder();
    next.connect(input2);
    const again = openOutputFifo(path);
    const done2 = next.pump(again, 'stdout');
    while (input2.got.stdout.length === 0) await sleep(2);
    closeSync(w);
    await done2;
    assert.equal(Buffer.concat(input.got.stdout).toString(), 'before\n');
    assert.equal(Buffer.concat(input2.got.stdout).toString(), 'after\n');
  });

  it('a reader that ends before its input is connected ends that input’s stream once it is', async () => {
    const hub = new OutputHub();
    hub.reset();
    const r = openOutputFifo(fifo());
    const done = hub.pump(r, 'stdout');
    r.destroy(); // the task failed to start
    await done;
    const input = recorder();
    hub.connect(input);
    assert.deepEqual(input.ends, ['stdout']);
  });
});
