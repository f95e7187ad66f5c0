// Restart policies (no, always, unless-stopped, on-failure[:max]) with dockerd's backoff: the delay
// starts at 100 ms, doubles after each quick failure, resets once a run lasted 10 s, capped at 1 min.
import type { RestartPolicy } from '../../../types/container-api.ts';

export const BACKOFF_START_MS = 100;
export const BACKOFF_MAX_MS = 60_000;
const RESET_AFTER_MS = 10_000;

export interface ExitFacts {
  exitCode: number;
  stoppedByUser: boolean;
  /** Killed by the user with some other signal: only unless-stopped gives up (see record.ts). */
  signalledByUser?: boolean;
  restartCount: number;
  /** The daemon is shutting down: nothing restarts. */
  shuttingDown: boolean;
}

export function shouldRestart(policy: RestartPolicy | undefined, f: ExitFacts): boolean {
  if (f.shuttingDown || f.stoppedByUser) return false;
  switch (policy?.Name) {
    case 'always':
      return true;
    case 'unless-stopped':
      return !f.signalledByUser;
    case 'on-failure':
      return f.exitCode !== 0 && (!policy.MaximumRetryCount || f.restartCount < policy.MaximumRetryCount);
    default:
      return false;
  }
}

/**
 * What a kill with `signal` means for the restart policy, as dockerd's killWithSignal: SIGKILL, the
 * container's own StopSignal, or any signal when it has none, end the restarts (ExitOnNext: no
 * policy restarts it, as after a stop); another signal only counts as a manual stop
 * (unless-stopped). Both hold until the next start from the API.
 */
export function killEffect(signal: number, stopSignal: number | undefined): 'stopped' | 'signalled' {
  if (signal === 9 || stopSignal === undefined || stopSignal === signal) return 'stopped';
  return 'signalled';
}

export function nextBackoff(previousMs: number, ranForMs: number): number {
  if (ranForMs >= RESET_AFTER_MS || previousMs === 0) return BACKOFF_START_MS;
  return Math.min(previousMs * 2, BACKOFF_MAX_MS);
}

export interface StartupFacts {
  /** Started at least once (a container only ever created is never started by the daemon). */
  startedBefore: boolean;
  running: boolean;
  exitCode: number;
  stoppedByUser: boolean;
  signalledByUser?: boolean;
  restartCount: number;
}

/**
 * Whether the daemon starts a stopped container when it comes up. As dockerd: `always` even after a
 * user stop, `unless-stopped` unless the user stopped it, `on-failure` when the last exit was a
 * failure and retries are left. Unlike dockerd, a user stop also holds back `on-failure` (dockerd
 * counts the stop's 137/143 as a failure and starts it: moby#35166, moby#47846).
 */
export function restartAtStartup(policy: RestartPolicy | undefined, f: StartupFacts): boolean {
  if (!f.startedBefore || f.running) return false;
  switch (policy?.Name) {
    case 'always':
      return true;
    case 'unless-stopped':
      return !f.stoppedByUser && !f.signalledByUser;
    case 'on-failure':
      return !f.stoppedByUser && f.exitCode !== 0 && (!policy.MaximumRetryCount || f.restartCount < policy.MaximumRetryCount);
    default:
      return false;
  }
}
