// The drivers that keep a file (json-file, local): consume the container's streams through the
// line framer into the format's encoder, and read back through the shared reader.

import { nowNano } from '../util/time.ts';
import { FrameSink, ReadSink, type LogCodec } from './codec.ts';
import { LineFramer, type RecordEncoder, type StreamId } from './framer.ts';
import { LogFile } from './logfile.ts';
import type { FileLogConfig } from './options.ts';
import { BlockPool, LogMessages, readBatches } from './reader.ts';
import type { LogDriver, LogReadOptions, LogStreams, LogWireFormat } from './types.ts';

/** Queued bytes at which a stream stops being read until the disk catches up. */
const HIGH_WATER = 8 * 1024 * 1024;
const LOW_WATER = 4 * 1024 * 1024;
const YIELD_EVERY = 1024 * 1024;

export class FileLogDriver implements LogDriver {
  private readonly file: LogFile;
  private readonly encoder: RecordEncoder;
  private readonly active = new Set<NodeJS.ReadableStream>();
  private readonly attaching = new Set<Promise<void>>();
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

  async attach(streams: LogStreams): Promise<void> {
    if (this.closing) throw new Error('log driver is closed');
    const job = (async () => {
      await this.file.open();
      const jobs: Promise<void>[] = [];
      if (streams.stdout) jobs.push(this.consume(streams.stdout, 0));
      if (streams.stderr) jobs.push(this.consume(streams.stderr, 1));
      await Promise.all(jobs);
      await this.file.flush();
    })();
    this.attaching.add(job);
    try {
      await job;
    } finally {
      this.attaching.delete(job);
    }
  }

  private async consume(stream: NodeJS.ReadableStream, id: StreamId): Promise<void> {
    const framer = new LineFramer(this.encoder, id);
    const file = this.file;
    this.active.add(stream);
    let sinceYield = 0;
    try {
      for await (const chunk of stream as AsyncIterable<Buffer | string>) {
        const ts = nowNano();
        file.chunkTs = ts;
        const buf = typeof chunk === 'string' ? Buffer.from(chunk) : chunk;
        framer.push(buf, ts);
        file.commit();
        if (file.queuedBytes > HIGH_WATER) {
          await file.waitForRoom(LOW_WATER);
          sinceYield = 0;
        } else if ((sinceYield += buf.length) > YIELD_EVERY && file.writing) {
          // A source that always has data keeps us in microtasks; let the event loop see finished
          // writes so the next write starts while we encode.
          await new Promise(setImmediate);
          sinceYield = 0;
        }
        if (this.closing) break;
      }
    } catch (err) {
      if (!this.closing) this.onError(err);
    } finally {
      this.active.delete(stream);
    }
    const ts = nowNano();
    file.chunkTs = ts;
    framer.end(ts);
    file.commit();
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
      await Promise.allSettled([...this.attaching]);
      await this.file.close();
    })();
    return this.closing;
  }
}
