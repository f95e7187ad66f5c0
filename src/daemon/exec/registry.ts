// The daemon's exec instances by ID, in memory only (as in dockerd: a restart forgets them). The
// composition root creates the registry before both of its users: the exec service keeps its
// records here, and the containers service reads a container's unfinished execs from it for
// inspect's ExecIDs, so neither service needs the other.

export interface ExecRecord {
  id: string;
  containerId: string;
  entrypoint: string;
  args: string[];
  env: string[];
  tty: boolean;
  privileged: boolean;
  user: string;
  workingDir: string;
  openStdin: boolean;
  openStdout: boolean;
  openStderr: boolean;
  detachKeys: Buffer;
  consoleSize?: { height: number; width: number };
  state: 'created' | 'starting' | 'running' | 'exited';
  exitCode: number | null;
  pid: number;
  finishedAt: number;
  /** Settles once the process runs (or failed to): resize waits on it. */
  started: Promise<void>;
  markStarted: () => void;
}

export class ExecRegistry extends Map<string, ExecRecord> {
  /** The container's execs not yet finished (inspect's ExecIDs). */
  idsOf(containerId: string): string[] {
    return [...this.values()].filter((e) => e.containerId === containerId && e.state !== 'exited').map((e) => e.id);
  }
}
