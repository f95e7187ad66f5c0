// How one probe result moves State.Health (dockerd's rules): a pass makes the container healthy and
// clears the failing streak; a failure adds to the streak — except while still "starting" inside the
// start period — and `retries` failures in a row make it unhealthy. The log keeps the last five.
import type { HealthState } from '../containers/record.ts';
import { MAX_LOG_ENTRIES } from './config.ts';

export interface ProbeResult {
  /** ISO timestamps. */
  Start: string;
  End: string;
  ExitCode: number;
  Output: string;
}

export function startingHealth(previous: HealthState | undefined): HealthState {
  return { Status: 'starting', FailingStreak: 0, Log: previous?.Log ?? [] };
}

export function applyProbeResult(
  h: HealthState,
  result: ProbeResult,
  opts: { retries: number; startPeriodMs: number; containerStartedAt: number },
): HealthState {
  const log = [...h.Log, result].slice(-MAX_LOG_ENTRIES);
  if (result.ExitCode === 0) return { Status: 'healthy', FailingStreak: 0, Log: log };
  const inStartPeriod = h.Status === 'starting' && Date.parse(result.Start) - opts.containerStartedAt < opts.startPeriodMs;
  if (inStartPeriod) return { ...h, Log: log };
  const streak = h.FailingStreak + 1;
  return { Status: streak >= opts.retries ? 'unhealthy' : h.Status, FailingStreak: streak, Log: log };
}
