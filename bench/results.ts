// What one benchmark run collects, group by group, before it is rendered.

import type { ApiPhases } from './scenarios/api-lifecycle.ts';
import type { ClientResults } from './scenarios/client-cli.ts';
import type { CommitRun } from './scenarios/commit.ts';
import type { CpRun } from './scenarios/cp.ts';
import type { FloorPhases } from './scenarios/floor.ts';
import type { ListResult } from './scenarios/list.ts';
import type { LogDriverRun } from './scenarios/log-drivers.ts';
import type { LogsRun } from './scenarios/logs.ts';
import type { PullRun } from './scenarios/pull.ts';
import type { RemoveRun } from './scenarios/remove.ts';
import type { SoakResult } from './scenarios/soak.ts';
import type { StorageRun } from './scenarios/storage.ts';
import type { StartupMarks } from './targets/daemon.ts';

export interface MemoryReading {
  when: string;
  engined?: { daemon: number; containerd: number };
  dockerd?: { daemon: number; containerd: number };
}

/** One figure per daemon kind; the optional extra kinds are engined variants run beside it. */
export interface Pair<T> {
  engined?: T[];
  dockerd?: T[];
}

export interface Results {
  startup: Pair<StartupMarks>;
  memory: MemoryReading[];
  lifecycle: {
    enginedNone?: ApiPhases[];
    enginedDefault?: ApiPhases[];
    dockerdNone?: ApiPhases[];
    floor?: FloorPhases[];
    floorEnginedSpec?: FloorPhases[];
    runc?: number[];
    spawn?: number[];
  };
  parallel: Pair<number>;
  list: { engined?: ListResult; dockerd?: ListResult };
  remove: Pair<RemoveRun>;
  soak?: SoakResult;
  logs: Pair<LogsRun>;
  exec: Pair<number>;
  cp: Pair<CpRun>;
  /** `service`: a second engined on containerd's diff service (the path before the fast path). */
  commit: Pair<CommitRun> & { service?: CommitRun[] };
  /** `service`: a second engined unpacking through containerd's diff service (the path before). */
  pull: Pair<PullRun> & { service?: PullRun[]; mb?: number };
  ping: Record<string, number[]>;
  /** Keyed `${kind}{Api,Cli}{None,Bridge}` (see scenarios/network.ts). */
  network: Record<string, number[]>;
  /** The engine CLI vs the docker CLI, both at engined. */
  client?: ClientResults;
  /** Lifecycle and commit per storage driver (daemons of their own). */
  storage?: StorageRun;
  /** Per log driver: a container's stdout through it (a daemon of its own). */
  logDrivers?: Record<string, LogDriverRun[]>;
  notes: string[];
}

export function emptyResults(): Results {
  return {
    startup: {},
    memory: [],
    lifecycle: {},
    parallel: {},
    list: {},
    remove: {},
    logs: {},
    exec: {},
    cp: {},
    commit: {},
    pull: {},
    ping: {},
    network: {},
    notes: [],
  };
}
