// Docker Engine API wire types for container logs: the request's options (since/until already in
// nanoseconds), one chunk of output as the log drivers and attach history yield it, and a read's
// entries, which a writer can also take a batch at a time.

export interface LogsRequest {
  follow: boolean;
  stdout: boolean;
  stderr: boolean;
  since?: bigint;
  until?: bigint;
  timestamps: boolean;
  tail: number;
}

export interface LogChunk {
  stream: 'stdout' | 'stderr';
  line: Buffer;
  timeNano: bigint;
}

/** A log read: its entries one at a time, or (for writers that want few, large writes) in batches. */
export interface LogChunks extends AsyncIterable<LogChunk> {
  /** The same entries in batches (one per block of the log file); use either this, frames or the iterator. */
  batches(): AsyncIterable<readonly LogChunk[]>;
  /**
   * The same entries already in the wire format of GET /containers/{id}/logs (8-byte frames unless
   * `tty`, each entry after its time with `timestamps`), in chunks; absent when the log driver
   * cannot produce it (then use batches). The chunks may be views into buffers the reader reuses:
   * a batch's chunks must be written out (or copied) by the time the batch after next is asked for.
   */
  frames?(format: { tty: boolean; timestamps: boolean }): AsyncIterable<readonly Buffer[]>;
}
