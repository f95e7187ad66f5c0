// Restart policies (no, always, unless-stopped, on-failure[:max]) with dockerd's backoff: the delay
// starts at 100 ms, doubles after each quick failure, resets once a run lasted 10 s, capped at 1 min.
import type { RestartPolicy } from '../../types/container-api.ts';

export const BACKOFF_START_MS = 100;
export const BACKOFF_MAX_MS = 60_000;
const RESET_AFTER_MS = 10_000;

export interface ExitFacts {
  exitCode: number;
  stoppedByUser: boolean;
  restartCount: number;
  /** The daemon is shutting down: nothing restarts. */
  shuttingDown: boolean;
}

export function shouldRestart(policy: RestartPolicy | undefined, f: ExitFacts): boolean {
  if (f.shuttingDown || f.stoppedByUser) return false;
  switch (policy?.Name) {
    case 'always':
    case 'unless-stopped':
      return true;
    case 'on-failure':
      return f.exitCode !== 0 && (!policy.MaximumRetryCount || f.restartCount < policy.MaximumRetryCount);
    default:
      return false;
  }
}

export function nextBackoff(previousMs: number, ranForMs: number): number {
  if (ranForMs >= RESET_AFTER_MS || previousMs === 0) return BACKOFF_START_MS;
  return Math.min(previousMs * 2, BACKOFF_MAX_MS);
}
