// The daemon's record of one container: what inspect returns, persisted in the store on every
// state change. Config and HostConfig are the create body as accepted (defaults filled in).
import { ZERO_TIME } from '../../util/time.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';

export type ContainerStatus = 'created' | 'running' | 'paused' | 'restarting' | 'removing' | 'exited' | 'dead';

export interface HealthState {
  Status: 'none' | 'starting' | 'healthy' | 'unhealthy';
  FailingStreak: number;
  Log: Array<{ Start: string; End: string; ExitCode: number; Output: string }>;
}

export interface ContainerState {
  Status: ContainerStatus;
  Running: boolean;
  Paused: boolean;
  Restarting: boolean;
  OOMKilled: boolean;
  Dead: boolean;
  Pid: number;
  ExitCode: number;
  Error: string;
  StartedAt: string;
  FinishedAt: string;
  Health?: HealthState;
}

export interface MountPoint {
  Type: 'bind' | 'volume' | 'tmpfs';
  Name?: string;
  Source: string;
  Destination: string;
  Driver?: string;
  Mode: string;
  RW: boolean;
  Propagation: string;
}

export interface ContainerRecord {
  Id: string;
  /** With the leading slash, as inspect shows it. */
  Name: string;
  Created: string;
  Path: string;
  Args: string[];
  State: ContainerState;
  /** The image ID (sha256:<config digest>). */
  Image: string;
  /** The reference the user gave (Config.Image keeps it too). */
  ImageRef: string;
  ResolvConfPath: string;
  HostnamePath: string;
  HostsPath: string;
  LogPath: string;
  RestartCount: number;
  Driver: string;
  Platform: string;
  MountLabel: string;
  ProcessLabel: string;
  AppArmorProfile: string;
  Config: ContainerConfig;
  HostConfig: HostConfig;
  Mounts: MountPoint[];
  /** Supervisor-side facts the daemon needs to find its pieces again after a restart. */
  Internal: {
    snapshotKey: string;
    snapshotter: string;
    /** The image's chain the writable layer sits on (records from before it was kept lack it). */
    chainId?: string;
    /**
     * The writable layer is not made yet: it is made at first use (start, cp, export, commit,
     * diff; writable-layer.ts), not at create. Absent: it exists.
     */
    layerPending?: boolean;
    runtime: string;
    /** Set when the user stopped it (unless-stopped must not restart it after a daemon restart). */
    stoppedByUser: boolean;
    /**
     * A kill with a signal other than SIGKILL and the container's own StopSignal (dockerd's
     * HasBeenManuallyStopped without ExitOnNext): unless-stopped no longer restarts it; always and
     * on-failure still do. Cleared by a start from the API.
     */
    signalledByUser?: boolean;
    /** Destinations of the mounts VolumesFrom brought in (never filled from the image). */
    inheritedMounts?: string[];
    /** Removal in progress (AutoRemove or DELETE) — survives a crash so start-up finishes it. */
    removing?: boolean;
    netnsPath?: string;
  };
}

export { ZERO_TIME };

export function initialState(): ContainerState {
  return {
    Status: 'created',
    Running: false,
    Paused: false,
    Restarting: false,
    OOMKilled: false,
    Dead: false,
    Pid: 0,
    ExitCode: 0,
    Error: '',
    StartedAt: ZERO_TIME,
    FinishedAt: ZERO_TIME,
  };
}

/** "Up 5 seconds", "Exited (0) 3 minutes ago" … as `docker ps` shows in STATUS. */
export function humanStatus(s: ContainerState, now = Date.now()): string {
  switch (s.Status) {
    case 'running': {
      const health =
        s.Health && s.Health.Status !== 'none' ? ` (${s.Health.Status === 'starting' ? 'health: starting' : s.Health.Status})` : '';
      return `Up ${humanDuration(now - Date.parse(s.StartedAt))}${health}`;
    }
    case 'paused':
      return `Up ${humanDuration(now - Date.parse(s.StartedAt))} (Paused)`;
    case 'restarting':
      return `Restarting (${s.ExitCode}) ${humanDuration(now - Date.parse(s.FinishedAt))} ago`;
    case 'removing':
      return 'Removal In Progress';
    case 'dead':
      return 'Dead';
    case 'exited':
      return s.FinishedAt === ZERO_TIME ? 'Created' : `Exited (${s.ExitCode}) ${humanDuration(now - Date.parse(s.FinishedAt))} ago`;
    default:
      return 'Created';
  }
}

/** The go-units HumanDuration wording that docker ps uses. */
export function humanDuration(ms: number): string {
  const seconds = Math.floor(ms / 1000);
  if (seconds < 1) return 'Less than a second';
  if (seconds === 1) return '1 second';
  if (seconds < 60) return `${seconds} seconds`;
  const minutes = Math.floor(seconds / 60);
  if (minutes === 1) return 'About a minute';
  if (minutes < 60) return `${minutes} minutes`;
  const hours = Math.round(seconds / 3600);
  if (hours === 1) return 'About an hour';
  if (hours < 48) return `${hours} hours`;
  if (hours < 24 * 7 * 2) return `${Math.floor(hours / 24)} days`;
  if (hours < 24 * 30 * 2) return `${Math.floor(hours / 24 / 7)} weeks`;
  if (hours < 24 * 365 * 2) return `${Math.floor(hours / 24 / 30)} months`;
  return `${Math.floor(hours / 24 / 365)} years`;
}
