// A running container's output fan-out: each read of the shim's FIFOs goes to the run's log input
// synchronously (with backpressure: the disk sets the pace) and, copied, to any attached clients
// (attach, docker run).
import type { LogInput } from '../../../logging/index.ts';
import type { FifoReader } from './fifo.ts';

export interface OutputChunk {
  stream: 'stdout' | 'stderr';
  data: Buffer;
}

type Listener = (chunk: OutputChunk | null) => void;

export class OutputHub {
  private readonly listeners = new Set<Listener>();
  /** The current run's log input; until it is connected the run's readers wait, not reading. */
  private input: LogInput | null = null;
  private waiting: Array<() => void> = [];
  private open = 0;
  private readonly releasers = new Set<() => void>();

  /** Subscribes to live output; `null` marks the end of the current run. Returns the unsubscribe. */
  subscribe(fn: Listener): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /** A new run: its readers wait for its log input (a previous run's never-connected readers stay paused). */
  reset(): void {
    this.input = null;
    this.waiting = [];
  }

  /** The run's log input (its driver is open): readers waiting for it start. */
  connect(input: LogInput): void {
    this.input = input;
    const waiting = this.waiting;
    this.waiting = [];
    for (const start of waiting) start();
  }

  /** Ends the run's log streams (a start that failed: no reader will). */
  endLog(): void {
    this.input?.end('stdout');
    this.input?.end('stderr');
  }

  /** Reads one FIFO into the hub; resolves when the writer side closes (process exited, output drained). */
  pump(source: FifoReader, stream: 'stdout' | 'stderr'): Promise<void> {
    this.open++;
    const { socket } = source;
    return new Promise((resolve) => {
      let input: LogInput | null = null;
      let finished = false;
      const start = (): void => {
        input = this.input!;
        if (finished) input.end(stream);
        else socket.resume();
      };
      source.onData = (data) => {
        if (this.listeners.size > 0) {
          const copy = Buffer.from(data); // the read buffer is reused once we return
          for (const l of this.listeners) l({ stream, data: copy });
        }
        if (input!.write(stream, data)) return true;
        void input!.writable(stream).then(() => {
          if (!finished) socket.resume();
        });
        return false;
      };
      const done = (): void => {
        if (finished) return;
        finished = true;
        input?.end(stream);
        if (--this.open === 0) for (const l of this.listeners) l(null);
        resolve();
      };
      socket.once('end', done);
      socket.once('error', done);
      // destroy() (the task failed to start) emits neither 'end' nor 'error', only 'close'.
      socket.once('close', done);
      // Every read went to the log input synchronously: stopping now loses nothing, and what was
      // not read stays in the pipe for the next daemon.
      const release = (): void => {
        socket.pause();
        socket.destroy();
        done();
      };
      this.releasers.add(release);
      socket.once('close', () => this.releasers.delete(release));
      if (this.input) start();
      else this.waiting.push(start);
    });
  }

  /**
   * Stops reading the FIFOs without losing a byte (live-restore shutdown): what was read went to
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
