// A run of a container as the rest of the containers service sees it: its pid, its exit and its
// stdio, whether the launcher started it or re-attached to it after a daemon restart.
import type { Writable } from 'node:stream';

export interface TaskExit {
  status: number;
  at: string;
  oom: boolean;
}

export interface RunningTask {
  pid: number;
  exited: Promise<TaskExit>;
  /** Resolves when the shim closed the output FIFOs (all output delivered). */
  ioDone: Promise<void>;
  stdin?: Writable;
  /** When the task began to be made (dockerd's StartedAt: before its NewTask), so a quick exit's
   * FinishedAt never precedes it; absent for a re-attached task. */
  startedAt?: string;
  /** Stops watching without touching the task (live-restore shutdown). */
  detach(): void;
}

/** The handle of a run whose exit is being waited for (`cancel` stops the wait). */
export function runningTask(
  pid: number,
  exited: Promise<TaskExit>,
  ioDone: Promise<void>,
  stdin: Writable | undefined,
  cancel: () => void,
): RunningTask {
  return { pid, exited, ioDone, ...(stdin ? { stdin } : {}), detach: cancel };
}
