// Log-driver plugins (dockerd's LogDriver protocol): at a run's start the daemon makes a FIFO, asks
// LogDriver.Capabilities and calls LogDriver.StartLogging {File, Info}; every line goes down the FIFO
// as a length-prefixed protobuf LogEntry (log-entry.ts); at the end LogDriver.StopLogging {File}.
// `docker logs` streams LogDriver.ReadLogs when the plugin says it can (Cap.ReadLogs); otherwise, as
// dockerd's dual logging, from a local-format cache beside the container (container-cached.log), or
// dockerd's 501 with cache-disabled=true. The FIFO: plugin-fifo.ts; ReadLogs' answer: plugin-read.ts.
import { PassThrough } from 'node:stream';
import { internal, notImplemented } from '../errors.ts';
import { formatTimeNano, nowNano, ZERO_TIME } from '../util/time.ts';
import { EntrySplitter, LineFramer, type RecordEncoder, type StreamId } from './framer.ts';
import { encodeLogEntry, type LogEntry } from './log-entry.ts';
import { READ_NOT_SUPPORTED } from './none.ts';
import type { LogDriver, LogMessage, LogPluginInfo, LogPluginTransport, LogReadOptions, LogStreams } from './types.ts';

import { FileLogDriver } from './file-driver.ts';
import { localCodec } from './format-local.ts';
import { cacheEnabled, cacheOptions, fileLogConfig } from './options.ts';
import { PluginFifo } from './plugin-fifo.ts';
import { pluginLogMessages } from './plugin-read.ts';

const SOURCES = ['stdout', 'stderr'] as const;
/** How long close() lets followers end on their own (the plugin ends ReadLogs) before cutting them. */
const FOLLOW_GRACE_MS = 1000;

export class PluginLogDriver implements LogDriver {
  readonly logPath = '';
  private fifo?: PluginFifo;
  private canRead?: boolean;
  private readonly active = new Set<NodeJS.ReadableStream>();
  private readonly attaching = new Set<Promise<void>>();
  private readonly followers = new Set<AbortController>();
  private closing?: Promise<void>;
  /** The partial line in progress per stream: its id and the next piece's ordinal. */
  private readonly splitter = new EntrySplitter();

  readonly name: string;
  private readonly plugin: LogPluginTransport;
  private readonly info: LogPluginInfo;
  private readonly fifoDir: string;

  /** dockerd's dual logging: where the local cache goes when the plugin cannot read ('' for none). */
  private readonly cachePath: string;
  private cache?: LogDriver;

  constructor(name: string, plugin: LogPluginTransport, info: LogPluginInfo, fifoDir: string, cachePath = '') {
    this.name = name;
    this.plugin = plugin;
    this.info = info;
    this.fifoDir = fifoDir;
    this.cachePath = cacheEnabled(info.Config) ? cachePath : '';
  }

  /** What a reader needs first: whether the plugin can read (asked once). */
  async prepareRead(): Promise<void> {
    if (this.canRead !== undefined) return;
    // As dockerd: a plugin that fails Capabilities has none.
    const r = await this.plugin.call<{ Cap?: { ReadLogs?: boolean }; Err?: string }>('LogDriver.Capabilities', null).catch(() => ({}));
    this.canRead = (r as { Cap?: { ReadLogs?: boolean } }).Cap?.ReadLogs === true;
    if (!this.canRead && this.cachePath) {
      this.cache = new FileLogDriver('local', this.cachePath, localCodec, fileLogConfig('local', cacheOptions(this.info.Config)));
    }
  }

  /** Opens the FIFO and has the plugin start reading it; a failure fails the container's start. */
  async start(): Promise<void> {
    await this.prepareRead();
    this.fifo = await PluginFifo.create(this.plugin.address.scopePath, this.fifoDir);
    try {
      const r = await this.plugin.call<{ Err?: string }>('LogDriver.StartLogging', { File: this.fifo.plugin, Info: this.info });
      if (r.Err) throw new Error(r.Err);
    } catch (err) {
      await this.dropFifo();
      throw internal(`failed to initialize logging driver: error creating logger: ${(err as Error).message}`);
    }
  }

  async attach(streams: LogStreams): Promise<void> {
    if (this.closing) throw new Error('log driver is closed');
    const job = (async () => {
      if (!this.fifo) await this.start();
      // With a cache, each stream feeds both the plugin and the cache.
      const out = this.cache ? tee(streams.stdout) : undefined;
      const err = this.cache ? tee(streams.stderr) : undefined;
      const stdout = out ? out[0] : streams.stdout;
      const stderr = err ? err[0] : streams.stderr;
      const jobs: Promise<void>[] = [];
      if (stdout) jobs.push(this.consume(stdout, 0));
      if (stderr) jobs.push(this.consume(stderr, 1));
      if (this.cache) jobs.push(this.cache.attach({ stdout: out?.[1] ?? null, stderr: err?.[1] ?? null }));
      await Promise.all(jobs);
    })();
    this.attaching.add(job);
    try {
      await job;
    } finally {
      this.attaching.delete(job);
    }
  }

  private async consume(stream: NodeJS.ReadableStream, sid: StreamId): Promise<void> {
    const out: Buffer[] = [];
    const framer = new LineFramer(this.encoder(out), sid);
    this.active.add(stream);
    try {
      for await (const chunk of stream as AsyncIterable<Buffer | string>) {
        framer.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, nowNano());
        await this.write(out);
        if (this.closing) break;
      }
    } catch (err) {
      if (!this.closing) throw err; // close() destroys the streams it stops reading
    } finally {
      this.active.delete(stream);
    }
    framer.end(nowNano());
    await this.write(out);
  }

  /** Entries as dockerd's copier makes them: lines without their newline, long ones in pieces. */
  private encoder(out: Buffer[]): RecordEncoder {
    return this.splitter.encoder((sid, line, ts, partial, meta) => {
      const e: LogEntry = { source: SOURCES[sid], timeNano: ts, line, partial };
      if (meta) e.partialMetadata = meta;
      out.push(encodeLogEntry(e));
    });
  }

  private async write(out: Buffer[]): Promise<void> {
    if (out.length === 0 || !this.fifo) return;
    await this.fifo.write(out);
  }

  read(opts: LogReadOptions, signal?: AbortSignal): AsyncIterable<LogMessage> {
    if (!this.canRead && this.cache) return this.cache.read(opts, signal);
    if (!this.canRead) throw notImplemented(READ_NOT_SUPPORTED);
    return this.readLogs(opts, signal);
  }

  private async *readLogs(opts: LogReadOptions, signal?: AbortSignal): AsyncIterable<LogMessage> {
    const ctl = new AbortController();
    const onAbort = () => ctl.abort();
    signal?.addEventListener('abort', onAbort, { once: true });
    if (opts.follow) {
      if (this.closing) opts = { ...opts, follow: false };
      else this.followers.add(ctl);
    }
    const time = (ns: bigint | undefined) => (ns === undefined ? ZERO_TIME : formatTimeNano(ns));
    try {
      const res = await this.plugin.stream(
        'LogDriver.ReadLogs',
        {
          Info: this.info,
          Config: { Since: time(opts.since), Until: time(opts.until), Tail: opts.tail ?? -1, Follow: opts.follow },
        },
        ctl.signal,
      );
      yield* pluginLogMessages(res as AsyncIterable<Buffer>, opts, ctl.signal);
    } catch (err) {
      if (ctl.signal.aborted) return;
      throw internal(`error getting log reader: ${(err as Error).message}`);
    } finally {
      this.followers.delete(ctl);
      signal?.removeEventListener('abort', onAbort);
      ctl.abort(); // ends the request when the consumer stopped early
    }
  }

  close(): Promise<void> {
    this.closing ??= (async () => {
      for (const s of this.active) (s as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.();
      // The cache stops reading its copies too: a stream that never ends is then given up.
      const cacheClosed = this.cache?.close();
      await Promise.allSettled([...this.attaching]);
      await cacheClosed;
      const fifo = this.fifo;
      if (fifo) {
        // What we queued reaches the pipe before the plugin is told to drain it and stop.
        await fifo.flushed(5000);
        let stopErr: unknown;
        await this.plugin.call<{ Err?: string }>('LogDriver.StopLogging', { File: fifo.plugin }).then(
          (r) => {
            if (r.Err) stopErr = new Error(r.Err);
          },
          (err) => (stopErr = err),
        );
        await this.dropFifo();
        if (this.followers.size > 0) {
          await new Promise((r) => setTimeout(r, FOLLOW_GRACE_MS));
          for (const f of this.followers) f.abort();
        }
        if (stopErr) throw stopErr;
      }
    })();
    return this.closing;
  }

  private async dropFifo(): Promise<void> {
    await this.fifo?.drop();
  }
}

/**
 * Two readers of one stream, each getting every chunk; the source is read only as fast as the
 * slower one takes it. Destroying either copy (a driver's close) stops the source.
 */
function tee(src: NodeJS.ReadableStream | null | undefined): [PassThrough, PassThrough] | undefined {
  if (!src) return undefined;
  const copies: [PassThrough, PassThrough] = [new PassThrough(), new PassThrough()];
  void (async () => {
    try {
      for await (const chunk of src as AsyncIterable<Buffer>) {
        const waits = copies
          .filter((c) => !c.destroyed && !c.write(chunk))
          .map((c) => new Promise((r) => (c.once('drain', r), c.once('close', r))));
        await Promise.all(waits);
        if (copies.every((c) => c.destroyed)) break;
      }
    } catch {
      // a destroyed source ends both copies
    }
    for (const c of copies) c.end();
  })();
  for (const c of copies)
    c.on('close', () => copies.every((x) => x.destroyed) && (src as NodeJS.ReadableStream & { destroy?: () => void }).destroy?.());
  return copies;
}
