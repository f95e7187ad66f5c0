// Docker Engine API wire types for exec instances: the create body and what starting one yields
// (the stream sink and the running session the route attaches the client to).
import type { Writable } from 'node:stream';

/** The body of POST /containers/{id}/exec. */
export interface ExecCreateBody {
  AttachStdin?: boolean;
  AttachStdout?: boolean;
  AttachStderr?: boolean;
  ConsoleSize?: number[] | null;
  DetachKeys?: string;
  Tty?: boolean;
  Env?: string[] | null;
  Cmd?: string[] | string | null;
  Privileged?: boolean;
  User?: string;
  WorkingDir?: string;
}

export type OutputSink = (stream: 'stdout' | 'stderr', data: Buffer) => void;

export interface ExecStartOptions {
  /** [height, width] from the start body. */
  consoleSize?: number[] | null | undefined;
}

export interface RunningExec {
  tty: boolean;
  /** The detach sequence for a TTY session (empty: the default applies). */
  detachKeys: Buffer;
  stdin?: Writable;
  closeStdin(): Promise<void>;
  /** Resolves with the exit code once it is recorded and the output delivered. */
  done: Promise<number>;
}

/** An exec's process in GET /exec/{id}/json (user only when one was given). */
export interface ProcessConfig {
  tty: boolean;
  entrypoint: string;
  arguments: string[];
  privileged: boolean;
  user?: string;
}

/** GET /exec/{id}/json (ExecInspectResponse in the API description, defined inline there; ExitCode null until the process exited). */
export interface ExecInspectResponse {
  CanRemove?: boolean;
  ID: string;
  Running: boolean;
  ExitCode: number | null;
  ProcessConfig: ProcessConfig;
  OpenStdin: boolean;
  OpenStderr: boolean;
  OpenStdout: boolean;
  ContainerID: string;
  DetachKeys?: string;
  Pid: number;
}
