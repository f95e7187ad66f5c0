// A container's health check settings (Config.Healthcheck, from the image or create) with dockerd's
// defaults, the probe command they stand for, and Go's duration wording for probe messages.
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

/** Go's time.Duration.String(): "500ms", "1.5s", "1m30s", "2h0m0s". */
export function goDuration(ns: number): string {
  if (ns === 0) return '0s';
  const sign = ns < 0 ? '-' : '';
  let u = Math.round(Math.abs(ns));
  const frac = (whole: number, rest: number, digits: number) => {
    const f = String(rest).padStart(digits, '0').replace(/0+$/, '');
    return f ? `${whole}.${f}` : String(whole);
  };
  if (u < 1e3) return `${sign}${u}ns`;
  if (u < 1e6) return `${sign}${frac(Math.floor(u / 1e3), u % 1e3, 3)}µs`;
  if (u < 1e9) return `${sign}${frac(Math.floor(u / 1e6), u % 1e6, 6)}ms`;
  const h = Math.floor(u / 3600e9);
  u -= h * 3600e9;
  const m = Math.floor(u / 60e9);
  u -= m * 60e9;
  const s = frac(Math.floor(u / 1e9), u % 1e9, 9);
  return `${sign}${h ? `${h}h` : ''}${h || m ? `${m}m` : ''}${s}s`;
}
