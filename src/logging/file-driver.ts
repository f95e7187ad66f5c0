// The drivers that keep a file (json-file, local): each read of the container's streams goes
// through the line framer into the format's encoder synchronously (open(): the daemon's FIFO
// readers hand over views of a reused buffer; attach() feeds Readables the same way), and is read
// back through the shared reader.

import { nowNano } from '../util/time.ts';
import { FrameSink, ReadSink, type LogCodec } from './codec.ts';
import { LineFramer, type RecordEncoder, type StreamId } from './framer.ts';
import { LogFile } from './logfile.ts';
import type { FileLogConfig } from './options.ts';
import { BlockPool, LogMessages, readBatches } from './reader.ts';
import type { LogAttachment, LogDriver, LogInput, LogReadOptions, LogStream, LogStreams, LogWireFormat } from './types.ts';

/** Queued bytes at which a stream stops being read until the disk catches up. */
const HIGH_WATER = 8 * 1024 * 1024;
const LOW_WATER = 4 * 1024 * 1024;
const YIELD_EVERY = 1024 * 1024;

export class FileLogDriver implements LogDriver {
  private readonly file: LogFile;
  private readonly encoder: RecordEncoder;
  private readonly active = new Set<NodeJS.ReadableStream>();
  private readonly attaching = new Set<Promise<void>>();
  /** Ends the inputs still open (close() without waiting for the streams' ends). */
  private readonly enders = new Set<() => void>();
  private closing: Promise<void> | null = null;

  constructor(
    readonly name: string,
    readonly logPath: string,
    private readonly codec: LogCodec,
    config: FileLogConfig,
    private readonly onError: (err: unknown) => void = () => {},
  ) {
    this.file = new LogFile({ path: logPath, ...config, onError });
    this.encoder = codec.createEncoder(this.file);
  }

  open(streams: { stdout: boolean; stderr: boolean }): LogAttachment {
    if (this.closing) throw new Error('log driver is closed');
    const file = this.file;
    const framers = [new LineFramer(this.encoder, 0), new LineFramer(this.encoder, 1)] as const;
    const ended = [!streams.stdout, !streams.stderr];
    let failed = false;
    let allEnded!: () => void;
    const endedAll = new Promise<void>((resolve) => (allEnded = resolve));
    const end = (id: StreamId): void => {
      if (ended[id]) return;
      ended[id] = true;
      if (!failed) {
        const ts = nowNano();
        file.chunkTs = ts;
        framers[id].end(ts);
        file.commit();
      }
      if (ended[0] && ended[1]) allEnded();
    };
    const endAll = (): void => (end(0), end(1));
    if (ended[0] && ended[1]) allEnded();
    // Records are encoded from the first read on; LogFile writes them once the file is open.
    let opening = true;
    const opened = file.open().then(
      () => void (opening = false),
      (err: unknown) => {
        failed = true; // what arrives from now on is dropped: the writer must never block on us
        opening = false;
        throw err;
      },
    );
    const input: LogInput = {
      write: (stream, data) => {
        const id: StreamId = stream === 'stdout' ? 0 : 1;
        if (failed || ended[id]) return true;
        const ts = nowNano();
        file.chunkTs = ts;
        framers[id].push(data, ts);
        file.commit();
        return file.queuedBytes <= HIGH_WATER;
      },
      writable: async () => {
        if (opening) await opened.catch(() => {}); // a failed open: writes are dropped from then on, and the end reports its error
        await file.waitForRoom(LOW_WATER);
      },
      end: (stream) => end(stream === 'stdout' ? 0 : 1),
    };
    this.enders.add(endAll);
    const done = (async () => {
      try {
        await opened;
        await endedAll;
        await file.flush();
      } finally {
        this.enders.delete(endAll);
      }
    })();
    this.attaching.add(done);
    void done.then(
      () => this.attaching.delete(done),
      () => this.attaching.delete(done),
    );
    return { input, done };
  }

  async attach(streams: LogStreams): Promise<void> {
    const { input, done } = this.open({ stdout: !!streams.stdout, stderr: !!streams.stderr });
    const sources = (
      [
        [streams.stdout, 'stdout'],
        [streams.stderr, 'stderr'],
      ] as const
    ).filter((s): s is readonly [NodeJS.ReadableStream, LogStream] => !!s[0]);
    for (const [s] of sources) this.active.add(s); // close() destroys them, read or not yet
    const feed = async (s: NodeJS.ReadableStream, stream: LogStream): Promise<void> => {
      let sinceYield = 0;
      try {
        for await (const chunk of s as AsyncIterable<Buffer | string>) {
          if (this.closing) break;
          const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
          if (!input.write(stream, buf)) {
            await input.writable(stream);
            sinceYield = 0;
          } else if ((sinceYield += buf.length) > YIELD_EVERY && this.file.writing) {
            // A source that always has data keeps us in microtasks; let the event loop see finished
            // writes so the next write starts while we encode.
            await new Promise(setImmediate);
            sinceYield = 0;
          }
        }
      } catch (err) {
        if (!this.closing) this.onError(err);
      } finally {
        this.active.delete(s);
        input.end(stream);
      }
    };
    // As before open() existed: both streams are read from the same turn once the file is open.
    await this.file.open().catch(() => {}); // a failure is done's to report
    await Promise.all([done, ...sources.map(([s, stream]) => feed(s, stream))]);
  }

  read(opts: LogReadOptions, signal?: AbortSignal): LogMessages {
    return new LogMessages(
      readBatches(this.file, this.codec, opts, new ReadSink(opts.stdout, opts.stderr, opts.since, opts.until), signal),
    );
  }

  readFrames(opts: LogReadOptions, format: LogWireFormat, signal?: AbortSignal): AsyncGenerator<Buffer[]> {
    // The caller keeps at most one batch in flight (LogChunks.frames): the blocks are reused.
    return readBatches(this.file, this.codec, opts, new FrameSink(opts, format.tty, format.timestamps), signal, new BlockPool());
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      // Streams still open (the daemon did not wait for attach): stop reading them.
      for (const s of this.active) (s as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      for (const end of [...this.enders]) end();
      await Promise.allSettled([...this.attaching]);
      await this.file.close();
    })();
    return this.closing;
  }
}
