// Docker Engine API wire types for container logs: the request's options (since/until already in
// nanoseconds) and one chunk of output as the log drivers and attach history yield it.

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
