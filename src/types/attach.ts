// Docker Engine API wire types for attach (hijacked and websocket): the query's options and the
// session a backend hands the route: history, live output, stdin.
import type { Writable } from 'node:stream';
import type { LogChunk } from './logs.ts';

export interface AttachOptions {
  stream: boolean;
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  logs: boolean;
  detachKeys?: string;
}

export interface AttachSession {
  tty: boolean;
  history?: AsyncIterable<LogChunk> | undefined;
  running(): boolean;
  /** Live output; null ends the run. */
  subscribe(fn: (chunk: { stream: 'stdout' | 'stderr'; data: Buffer } | null) => void): () => void;
  stdin?: (() => Writable | undefined) | undefined;
  /**
   * The client half-closed its input. Returns false when the container's stdin stays open (no
   * StdinOnce, or a TTY): then, as in dockerd, the attach's output ends too and the client detaches.
   */
  closeStdin(): Promise<boolean | void>;
}
