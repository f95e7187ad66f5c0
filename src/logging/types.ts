// The log-driver contract shared by every driver (json-file, local, none, plugins) and by the daemon, which
// hands a container's stdout/stderr to attach() and serves GET /containers/{id}/logs from read().

export type LogStream = 'stdout' | 'stderr';

export interface LogMessage {
  stream: LogStream;
  /** The bytes of one entry; ends with \n unless the entry is a piece of a longer line (partial). */
  line: Buffer;
  /** Wall-clock time the line was received, nanoseconds since the Unix epoch. */
  timeNano: bigint;
  /** True for a piece of a line longer than 16 KiB or an unterminated last line (dockerd's partial messages). */
  partial?: boolean;
}

export interface LogReadOptions {
  /** Keep the iterator open and deliver new entries until the signal aborts or the driver closes. */
  follow: boolean;
  /** Only entries at or after this time (ns). */
  since?: bigint;
  /** Only entries at or before this time (ns); reading stops at the first later entry. */
  until?: bigint;
  /** Number of entries from the end (counted over both streams, like dockerd); -1 or undefined = all. */
  tail?: number;
  stdout: boolean;
  stderr: boolean;
}

/** How GET /containers/{id}/logs sends entries: raw with a TTY (else 8-byte frames), with each one's time first. */
export interface LogWireFormat {
  tty: boolean;
  timestamps: boolean;
}

export interface LogStreams {
  stdout?: NodeJS.ReadableStream | null;
  stderr?: NodeJS.ReadableStream | null;
}

/**
 * A driver's synchronous input: what the daemon's FIFO readers feed. Every write consumes its
 * bytes before it returns (they are a view into a read buffer that is reused right after).
 */
export interface LogInput {
  /** Takes one read of a stream; false asks the caller to stop reading until writable() settles. */
  write(stream: LogStream, data: Buffer): boolean;
  /** Settles when the driver wants more of the stream again (never rejects). */
  writable(stream: LogStream): Promise<void>;
  /** The stream has no more bytes (idempotent): an unterminated last line becomes a partial entry. */
  end(stream: LogStream): void;
}

/** A driver fed through a LogInput; `done` settles as attach()'s promise does. */
export interface LogAttachment {
  input: LogInput;
  done: Promise<void>;
}

export interface LogDriver {
  readonly name: string;
  /** Path of the current log file; '' when the driver keeps none. */
  readonly logPath: string;
  /**
   * Consume the streams until both end. Resolves once every byte read has been written to the file
   * (write calls completed, not fsynced). Lines are timestamped when read.
   */
  attach(streams: LogStreams): Promise<void>;
  /**
   * The same as attach() with the bytes handed over synchronously (no stream per read): drivers
   * that encode in-process offer it; attachInput() adapts the others. `stdout`/`stderr` say which
   * streams will be written (each must be ended).
   */
  open?(streams: { stdout: boolean; stderr: boolean }): LogAttachment;
  /** Entries in file order. Throws a NOT_IMPLEMENTED EngineError for drivers that cannot read. */
  read(opts: LogReadOptions, signal?: AbortSignal): AsyncIterable<LogMessage>;
  /**
   * The same entries already in the wire format of GET /containers/{id}/logs, in chunks (a batch
   * per block read): drivers with a file offer it, the others leave it out. The chunks are views
   * into blocks the read reuses: a batch is the caller's until it asks for the batch after next.
   */
  readFrames?(opts: LogReadOptions, format: LogWireFormat, signal?: AbortSignal): AsyncIterable<Buffer[]>;
  /** Stop consuming, flush, close files; followers drain what was written and end. Idempotent. */
  close(): Promise<void>;
  /** Set-up that must succeed before the container starts (a log plugin's StartLogging). */
  start?(): Promise<void>;
  /** What a reader must await before read() (a log plugin's Capabilities). */
  prepareRead?(): Promise<void>;
}

export interface LogDriverOptions {
  containerId: string;
  /** The container's directory; json-file writes <dir>/<id>-json.log, local <dir>/local-logs/container.log. */
  dir: string;
  /** Effective log-opts (daemon defaults merged with the container's). */
  options: Record<string, string>;
  /**
   * Container facts for the labels/env/tag options, as built by logAttrs(): name, image, imageId,
   * 'label:<key>' and 'env:<KEY>' entries.
   */
  attrs: Record<string, string>;
  /** For a driver that is a plugin: the plugin, the container facts it is sent, where FIFOs go. */
  plugin?: { transport: LogPluginTransport; info: LogPluginInfo; fifoDir: string };
}

/** The plugin as the driver needs it (the plugin registry's client fits this). */
export interface LogPluginTransport {
  readonly name: string;
  readonly address: { scopePath?: (path: string) => string };
  call<T>(method: string, body: unknown): Promise<T>;
  stream(method: string, body: unknown, signal?: AbortSignal): Promise<NodeJS.ReadableStream>;
}

/** dockerd's logger.Info as plugins receive it in StartLogging and ReadLogs. */
export interface LogPluginInfo {
  Config: Record<string, string>;
  ContainerID: string;
  ContainerName: string;
  ContainerEntrypoint: string;
  ContainerArgs: string[];
  ContainerImageID: string;
  ContainerImageName: string;
  ContainerCreated: string;
  ContainerEnv: string[];
  ContainerLabels: Record<string, string>;
  LogPath: string;
  DaemonName: string;
}
