// A container's health check settings (Config.Healthcheck, from the image or create) with dockerd's
// defaults, and the probe command they stand for.
import type { ContainerConfig, HealthConfig } from '../../types/container-api.ts';

export const DEFAULT_INTERVAL_MS = 30_000;
export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_START_PERIOD_MS = 0;
export const DEFAULT_START_INTERVAL_MS = 5_000;
export const DEFAULT_RETRIES = 3;
/** Probe output kept per log entry; longer output is cut and marked with "...". */
export const MAX_OUTPUT_BYTES = 4096;
/** Log entries kept in State.Health.Log. */
export const MAX_LOG_ENTRIES = 5;

export interface HealthSettings {
  /** argv of the probe; undefined: no health check (none configured, NONE, or an unknown type). */
  command: string[] | undefined;
  intervalMs: number;
  timeoutMs: number;
  startPeriodMs: number;
  startIntervalMs: number;
  retries: number;
  /** The timeout as configured, in ns (for the "exceeded timeout (…)" message). */
  timeoutNs: number;
}

const nsToMs = (ns: number | undefined, dflt: number) => (ns && ns > 0 ? ns / 1e6 : dflt);

export function healthSettings(config: Pick<ContainerConfig, 'Healthcheck' | 'Shell'>): HealthSettings {
  const hc: HealthConfig = config.Healthcheck ?? {};
  return {
    command: probeCommand(hc.Test, config.Shell),
    intervalMs: nsToMs(hc.Interval, DEFAULT_INTERVAL_MS),
    timeoutMs: nsToMs(hc.Timeout, DEFAULT_TIMEOUT_MS),
    startPeriodMs: nsToMs(hc.StartPeriod, DEFAULT_START_PERIOD_MS),
    startIntervalMs: nsToMs(hc.StartInterval, DEFAULT_START_INTERVAL_MS),
    retries: hc.Retries && hc.Retries > 0 ? hc.Retries : DEFAULT_RETRIES,
    timeoutNs: hc.Timeout && hc.Timeout > 0 ? hc.Timeout : DEFAULT_TIMEOUT_MS * 1e6,
  };
}

/** ["CMD", a, b] → [a, b]; ["CMD-SHELL", s] → [...shell, s]; ["NONE"], [] or another type → undefined. */
export function probeCommand(test: string[] | undefined, shell?: string[] | null): string[] | undefined {
  if (!test || test.length === 0) return undefined;
  switch (test[0]) {
    case 'CMD':
      return test.slice(1);
    case 'CMD-SHELL':
      return [...(shell && shell.length ? shell : ['/bin/sh', '-c']), ...test.slice(1)];
    default:
      return undefined;
  }
}
