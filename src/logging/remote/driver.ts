// The drivers that send each entry to a receiver (gelf, syslog, fluentd, journald): lines are cut
// as dockerd's copier cuts them (no newline; 16 KiB pieces of a longer line carry partial metadata),
// handed to the driver's encoder and queued on its transport. Everything is asynchronous: a receiver
// that is down or slow only fills the queue. With mode=blocking (the default) a full queue pauses the
// container's stream; with mode=non-blocking an entry that does not fit in max-buffer-size is dropped
// and counted. As dockerd's dual logging, a local-format cache beside the container serves
// `docker logs` unless cache-disabled=true.

import { internal, notImplemented } from '../../errors.ts';
import { nowNano } from '../../util/time.ts';
import { FileLogDriver } from '../file-driver.ts';
import { localCodec } from '../format-local.ts';
import { EntrySplitter, LineFramer, type RecordEncoder, type StreamId } from '../framer.ts';
import { READ_NOT_SUPPORTED } from '../none.ts';
import { cacheEnabled, cacheOptions, fileLogConfig, parseSize } from '../options.ts';
import type {
  LogAttachment,
  LogDriver,
  LogDriverOptions,
  LogInput,
  LogMessage,
  LogReadOptions,
  LogStream,
  LogStreams,
  LogWireFormat,
} from '../types.ts';
import type { Transport } from './transport.ts';

/** One entry as dockerd's logger.Message: the line without its newline. */
export interface RemoteRecord {
  stream: LogStream;
  line: Buffer;
  timeNano: bigint;
  partial?: { id: string; ordinal: number; last: boolean };
}

/** A record's bytes for the transport (datagrams, or a stream's frames); null skips it (empty lines). */
export type RecordEncoderFn = (rec: RemoteRecord) => Buffer[] | null;

/** What createLogDriver hands a remote driver's factory. */
export type RemoteFactoryOptions = LogDriverOptions & { onError?: (err: unknown) => void; onDebug?: (msg: string) => void };

/** dockerd's ring buffer default for mode=non-blocking (1 MB). */
const DEFAULT_MAX_BUFFER = 1_000_000;
/** Blocking mode: queued bytes at which the stream pauses, and where it resumes. */
const HIGH_WATER = 1 << 20;
const LOW_WATER = 256 << 10;
const SOURCES: readonly LogStream[] = ['stdout', 'stderr'];

export interface RemoteDriverOptions {
  name: string;
  encode: RecordEncoderFn;
  transport: Transport;
  /** The container's log-opts (mode, max-buffer-size, cache-*). */
  options: Record<string, string>;
  /** Where the dual-logging cache goes. */
  cachePath: string;
  /**
   * Reads the entries back from the receiver itself when there is no cache (journald is a log
   * reader in dockerd); `closed` settles when the driver closes (a follow then ends).
   */
  read?: (opts: LogReadOptions, signal: AbortSignal | undefined, closed: Promise<void>) => AsyncIterable<LogMessage>;
  /** Drops and send failures (the daemon logs them at debug). */
  onDebug?: (msg: string) => void;
  onError?: (err: unknown) => void;
  /** False when the transport buffers and drops on its own (fluentd-async): its queue never holds the container. */
  transportHolds?: boolean;
  /** dockerd's wording of a failed first connection (it follows "failed to initialize logging driver: "). */
  startError?: (err: Error) => string;
}

export class RemoteLogDriver implements LogDriver {
  readonly name: string;
  readonly logPath = '';
  /** Entries dropped because the buffer was full (mode=non-blocking) or the encoder refused them. */
  dropped = 0;
  private readonly transport: Transport;
  private readonly encode: RecordEncoderFn;
  private readonly nonBlocking: boolean;
  private readonly maxBuffer: number;
  private readonly cache?: FileLogDriver;
  private readonly debug: (msg: string) => void;
  private readonly attaching = new Set<Promise<void>>();
  private readonly enders = new Set<() => void>();
  private readonly active = new Set<NodeJS.ReadableStream>();
  private readonly splitter = new EntrySplitter();
  private started?: Promise<void>;
  private closing?: Promise<void>;
  private lastDropLog = 0;
  private readonly startError: (err: Error) => string;
  private readonly transportHolds: boolean;
  private readonly readBack: RemoteDriverOptions['read'];
  /** Settles when close() is called (a follow of readBack ends). */
  private readonly closed: Promise<void>;
  private markClosed!: () => void;

  constructor(o: RemoteDriverOptions) {
    this.name = o.name;
    this.transport = o.transport;
    this.encode = o.encode;
    this.debug = o.onDebug ?? (() => {});
    this.startError = o.startError ?? ((err) => err.message);
    this.transportHolds = o.transportHolds ?? true;
    this.readBack = o.read;
    this.closed = new Promise((resolve) => (this.markClosed = resolve));
    this.nonBlocking = o.options['mode'] === 'non-blocking';
    const size = o.options['max-buffer-size'];
    this.maxBuffer = size ? parseSize(size, true) : DEFAULT_MAX_BUFFER;
    if (cacheEnabled(o.options) && o.cachePath) {
      this.cache = new FileLogDriver('local', o.cachePath, localCodec, fileLogConfig('local', cacheOptions(o.options)), o.onError);
    }
  }

  /** Connects as dockerd's driver constructor does: an unreachable stream receiver fails the start. */
  start(): Promise<void> {
    this.started ??= this.transport.connect().catch((err: Error) => {
      throw internal(`failed to initialize logging driver: ${this.startError(err)}`);
    });
    return this.started;
  }

  open(streams: { stdout: boolean; stderr: boolean }): LogAttachment {
    if (this.closing) throw new Error('log driver is closed');
    void this.start().catch((err: unknown) => this.debug(`${this.name}: ${(err as Error).message}`));
    const cache = this.cache?.open(streams);
    const encoder = this.recordEncoder();
    const framers = [new LineFramer(encoder, 0), new LineFramer(encoder, 1)] as const;
    const ended = [!streams.stdout, !streams.stderr];
    let allEnded!: () => void;
    const endedAll = new Promise<void>((resolve) => (allEnded = resolve));
    const end = (id: StreamId): void => {
      if (ended[id]) return;
      ended[id] = true;
      framers[id].end(nowNano());
      cache?.input.end(SOURCES[id]!);
      if (ended[0] && ended[1]) allEnded();
    };
    const endAll = (): void => (end(0), end(1));
    if (ended[0] && ended[1]) allEnded();
    const input: LogInput = {
      write: (stream, data) => {
        const id: StreamId = stream === 'stdout' ? 0 : 1;
        if (ended[id]) return true;
        const cacheOk = cache ? cache.input.write(stream, data) : true;
        framers[id].push(data, nowNano());
        if (this.nonBlocking) return true; // the cache's disk queue aside, nothing may hold the container
        return cacheOk && (!this.transportHolds || this.transport.queued <= HIGH_WATER);
      },
      writable: async (stream) => {
        if (this.nonBlocking) return;
        await Promise.all([cache?.input.writable(stream), this.transportHolds && this.transport.waitForRoom(LOW_WATER)]);
      },
      end: (stream) => end(stream === 'stdout' ? 0 : 1),
    };
    this.enders.add(endAll);
    const done = (async () => {
      try {
        await endedAll;
        await cache?.done;
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

  /** Records from the framer's output: one per line, 16 KiB pieces of longer lines as partials. */
  private recordEncoder(): RecordEncoder {
    return this.splitter.encoder((sid, line, ts, _partial, meta) => {
      const rec: RemoteRecord = { stream: SOURCES[sid]!, line, timeNano: ts };
      if (meta) rec.partial = meta;
      this.submit(rec);
    });
  }

  private submit(rec: RemoteRecord): void {
    let packets: Buffer[] | null;
    try {
      packets = this.encode(rec);
    } catch (err) {
      this.drop(`${this.name}: cannot send message: ${(err as Error).message}`);
      return;
    }
    if (!packets) return;
    if (this.nonBlocking) {
      let size = 0;
      for (const p of packets) size += p.length;
      if (this.transport.queued + size > this.maxBuffer) {
        this.drop(`${this.name}: buffer full (max-buffer-size ${this.maxBuffer}), message dropped`);
        return;
      }
    }
    this.transport.write(packets);
  }

  private drop(why: string): void {
    this.dropped++;
    const now = Date.now();
    if (now - this.lastDropLog > 1000) {
      this.lastDropLog = now;
      this.debug(`${why} (${this.dropped} dropped so far)`);
    }
  }

  async attach(streams: LogStreams): Promise<void> {
    const { input, done } = this.open({ stdout: !!streams.stdout, stderr: !!streams.stderr });
    const feed = async (s: NodeJS.ReadableStream, stream: LogStream): Promise<void> => {
      this.active.add(s);
      try {
        for await (const chunk of s as AsyncIterable<Buffer | string>) {
          if (this.closing) break;
          if (!input.write(stream, typeof chunk === 'string' ? Buffer.from(chunk) : chunk)) await input.writable(stream);
        }
      } catch (err) {
        if (!this.closing) throw err; // close() destroys the streams it stops reading
      } finally {
        this.active.delete(s);
        input.end(stream);
      }
    };
    const jobs = [done];
    if (streams.stdout) jobs.push(feed(streams.stdout, 'stdout'));
    if (streams.stderr) jobs.push(feed(streams.stderr, 'stderr'));
    await Promise.all(jobs);
  }

  read(opts: LogReadOptions, signal?: AbortSignal): AsyncIterable<LogMessage> {
    if (!this.cache && this.readBack) return this.readBack(opts, signal, this.closed);
    if (!this.cache) throw notImplemented(READ_NOT_SUPPORTED);
    return this.cache.read(opts, signal);
  }

  get readFrames(): ((opts: LogReadOptions, format: LogWireFormat, signal?: AbortSignal) => AsyncIterable<Buffer[]>) | undefined {
    const cache = this.cache;
    return cache ? (opts, format, signal) => cache.readFrames(opts, format, signal) : undefined;
  }

  close(): Promise<void> {
    this.markClosed();
    this.closing ??= (async () => {
      for (const s of this.active) (s as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      for (const end of [...this.enders]) end();
      await Promise.allSettled([...this.attaching]);
      await this.cache?.close();
      await this.transport.close();
      if (this.dropped + this.transport.dropped > 0) {
        this.debug(
          `${this.name}: ${this.dropped} messages dropped (buffer full or unencodable), ${this.transport.dropped} by the transport`,
        );
      }
    })();
    return this.closing;
  }
}
