// What a node's agent needs of its local engine to run tasks as ordinary containers; the
// composition root fills it from the containers service (cluster/ never reaches into daemon/).
import type { LogChunk, LogsRequest } from '../../types/logs.ts';
import type { TaskFile } from './task-files.ts';

export interface TaskContainerState {
  running: boolean;
  /** Exited after a start (as opposed to created, never started). */
  exited: boolean;
  pid: number;
  exitCode: number;
  error: string;
}

export interface TaskRuntime {
  /**
   * Creates and starts a container; returns its ID. Failures throw with the engine's message.
   * `networks`: overlay networks (name or ID) the container may join though not attachable.
   */
  run(name: string, body: Record<string, unknown>, networks?: string[]): Promise<string>;
  /** The host ports the container's ports are bound to (ports of mode host): `80/tcp` → 8081. */
  hostPorts?(id: string): Promise<Array<{ target: string; published: number }>>;
  /** The container's state, or null if it is gone. */
  state(id: string): TaskContainerState | null;
  stop(id: string, timeoutSeconds: number): Promise<void>;
  /** Forced removal; a missing container is not an error. */
  remove(id: string): Promise<void>;
  /** Containers made for tasks (label com.docker.swarm.task.id) on this engine. */
  list(): Promise<Array<{ id: string; taskId: string }>>;
  logs(id: string, req: LogsRequest, signal: AbortSignal): Promise<{ tty: boolean; lines: AsyncIterable<LogChunk> }>;
  /** Writes a task's secret and config files into a tmpfs of its own; returns that directory. */
  writeFiles(taskId: string, files: TaskFile[]): Promise<string>;
  /** Unmounts and removes a task's files (none: nothing to do). */
  removeFiles(taskId: string): Promise<void>;
  /** Whether the engine holds the image (by reference, digest references included). */
  hasImage(image: string): Promise<boolean>;
  /** Pulls an image with X-Registry-Auth-form credentials; rejects with the registry's error. */
  pull(image: string, registryAuth: string | undefined, signal: AbortSignal): Promise<void>;
  /** The manifest digest a registry gives for a reference (what GET /distribution/{name}/json answers). */
  resolveDigest(image: string, registryAuth: string | undefined): Promise<string>;
  /** Calls `fn` with the ID of every container whose process ended; returns the unsubscribe. */
  onExit(fn: (id: string) => void): () => void;
}
