// A container's stdin as attached clients see it: a writable that exists before the task does.
// `docker run -i` attaches, writes its input and may half-close before the container has started;
// the relay holds those bytes (with backpressure, not an unbounded buffer) until the run's stdin
// FIFO is connected, then delivers them in order, and only then the end of input.
import { Writable } from 'node:stream';

export class StdinRelay extends Writable {
  private target: Writable | undefined;
  private resumeWrite: (() => void) | undefined;
  private resumeFinal: (() => void) | undefined;
  /** Set once a run's stdin has been connected (the relay belongs to that run from then on). */
  connected = false;

  /** @param onEnd closes the process's stdin after the last byte (end of the FIFO, CloseIO). */
  constructor(private readonly onEnd: (target: Writable) => Promise<void>) {
    super({ highWaterMark: 64 * 1024 });
  }

  get connectedTo(): Writable | undefined {
    return this.target;
  }

  /** Hands the run's stdin FIFO over; anything written before flows now. */
  connect(target: Writable): void {
    this.target = target;
    this.connected = true;
    target.on('error', () => this.destroy());
    const w = this.resumeWrite;
    this.resumeWrite = undefined;
    w?.();
    const f = this.resumeFinal;
    this.resumeFinal = undefined;
    f?.();
  }

  override _write(chunk: Buffer, _enc: BufferEncoding, cb: (err?: Error | null) => void): void {
    const deliver = () => {
      if (this.target!.write(chunk)) cb();
      else this.target!.once('drain', () => cb());
    };
    if (this.target) deliver();
    else this.resumeWrite = deliver;
  }

  override _final(cb: (err?: Error | null) => void): void {
    // The end of input is delivered either way; onEnd logs its own failures (io.ts), and an error
    // here would only fail the client's half-close, which has nothing left to do about it.
    const close = () =>
      void this.onEnd(this.target!).then(
        () => cb(),
        () => cb(),
      );
    if (this.target) close();
    else this.resumeFinal = close;
  }

  override _destroy(err: Error | null, cb: (err?: Error | null) => void): void {
    this.resumeWrite = undefined;
    this.resumeFinal = undefined;
    cb(err);
  }
}
