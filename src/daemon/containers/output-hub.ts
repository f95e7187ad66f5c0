// A running container's output fan-out: bytes from the shim's FIFOs go to the log driver (with
// backpressure: the disk sets the pace) and to any attached clients (attach, docker run).
import { PassThrough, type Readable } from 'node:stream';

export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

type Listener = (chunk: OutputChunk | null) => void;

export class OutputHub {
  private readonly listeners = new Set<Listener>();
  /** Fed to the log driver; one pair per task run. */
  logStdout = new PassThrough({ highWaterMark: 64 << 10 });
  logStderr = new PassThrough({ highWaterMark: 64 << 10 });
  private open = 0;
  private readonly releasers = new Set<() => void>();

  /** Subscribes to live output; `null` marks the end of the current run. Returns the unsubscribe. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** New log passthroughs for a new run (the previous ones ended with the previous run). */
  reset(): void {
    this.logStdout = new PassThrough({ highWaterMark: 64 << 10 });
    this.logStderr = new PassThrough({ highWaterMark: 64 << 10 });
  }

  /** Pipes one FIFO into the hub; resolves when the writer side closes (process exited, output drained). */
  pump(source: Readable, stream: 'stdout' | 'stderr'): Promise<void> {
    this.open++;
    const sink = stream === 'stdout' ? this.logStdout : this.logStderr;
    return new Promise((resolve) => {
      source.on('data', (data: Buffer) => {
        for (const l of this.listeners) l({ stream, data });
        if (!sink.write(data)) {
          source.pause();
          sink.once('drain', () => source.resume());
        }
      });
      let finished = false;
      const done = () => {
        if (finished) return;
        finished = true;
        sink.end();
        if (--this.open === 0) for (const l of this.listeners) l(null);
        resolve();
      };
      source.once('end', done);
      source.once('error', done);
      // destroy() (the task failed to start) emits neither 'end' nor 'error', only 'close'.
      source.once('close', done);
      const release = () => {
        // Paused, read() hands out (through 'data') only what is already buffered; the rest stays
        // in the FIFO for the next daemon. All synchronous: no read can slip in between.
        source.pause();
        while (source.read() !== null);
        source.destroy();
        done();
      };
      this.releasers.add(release);
      source.once('close', () => this.releasers.delete(release));
    });
  }

  /**
   * Stops reading the FIFOs without losing a byte (live-restore shutdown): what was read goes to
   * the log streams, which then end; what was not stays in the pipe for the next daemon.
   */
  release(): void {
    for (const release of [...this.releasers]) release();
  }

  /** Ends attached clients when a run produced no stream at all (e.g. the task failed to start). */
  endRun(): void {
    if (this.open === 0) for (const l of this.listeners) l(null);
  }
}
