// Runs each running container's health probe on its interval through exec, records the results
// in State.Health (persisted with the record) and reports status transitions. One loop per
// container run: it starts when the container starts (or is re-adopted after a daemon restart) and
// stops when it exits; a paused container is not probed. The restart policy never looks at health.
import type { HealthState, ContainerRecord } from '../containers/record.ts';
import type { ContainerRunEvents } from '../containers/run-events.ts';
import type { Logger } from '../../util/log.ts';
import { formatGoDuration } from '../../wire/go-duration.ts';
import { healthSettings, MAX_OUTPUT_BYTES, type HealthSettings } from './config.ts';
import { applyProbeResult, startingHealth, type ProbeResult } from './state.ts';

export interface HealthHost {
  /** The live record, or throws when the container is gone. */
  find(id: string): ContainerRecord;
  /** Persists the record after State.Health changed in place. */
  save(id: string): void;
  /** Runs a probe command in the container (exec). */
  probe(
    containerId: string,
    cmd: string[],
    timeoutMs: number,
    maxOutput: number,
  ): Promise<{ exitCode: number; output: string; timedOut: boolean }>;
}

export interface HealthMonitorDeps {
  host: HealthHost;
  log: Logger;
  /** Status transitions after a probe ("health_status: healthy" events; the reset to starting is not one, as in dockerd). */
  onStatus?: (containerId: string, status: HealthState['Status']) => void;
  /** Container runs: probing starts with a run and stops with it. */
  runs?: ContainerRunEvents;
}

interface Loop {
  settings: HealthSettings;
  startedAt: number;
  timer?: NodeJS.Timeout;
  stopped: boolean;
}

function isoNow(): string {
  const ms = performance.timeOrigin + performance.now();
  const base = new Date(Math.floor(ms)).toISOString().slice(0, 19);
  const ns = Math.floor((ms % 1000) * 1e6);
  return `${base}.${String(ns).padStart(9, '0')}Z`;
}

export class HealthMonitor {
  private readonly loops = new Map<string, Loop>();

  constructor(private readonly d: HealthMonitorDeps) {
    d.runs?.subscribe((rec, change) => (change === 'started' ? this.started(rec) : this.stopped(rec.Id)));
  }

  /**
   * A run of the container began: health goes back to "starting" (the log is kept) and probing
   * starts. Without a usable health check nothing changes. The caller persists the record.
   */
  started(rec: ContainerRecord): void {
    this.stopped(rec.Id);
    const settings = healthSettings(rec.Config);
    if (!settings.command) return;
    rec.State.Health = startingHealth(rec.State.Health);
    const startedAt = Date.parse(rec.State.StartedAt);
    const loop: Loop = { settings, startedAt: Number.isFinite(startedAt) ? startedAt : Date.now(), stopped: false };
    this.loops.set(rec.Id, loop);
    this.schedule(rec.Id, loop);
  }

  /** The run ended: no more probes (a probe in flight finishes, its result is dropped). */
  stopped(id: string): void {
    const loop = this.loops.get(id);
    if (!loop) return;
    loop.stopped = true;
    clearTimeout(loop.timer);
    this.loops.delete(id);
  }

  stopAll(): void {
    for (const id of [...this.loops.keys()]) this.stopped(id);
  }

  /** dockerd's spacing: the start interval while starting within the start period, else the interval. */
  private nextDelay(id: string, loop: Loop): number {
    const s = loop.settings;
    if (Date.now() - loop.startedAt >= s.startPeriodMs) return s.intervalMs;
    let status: string | undefined;
    try {
      status = this.d.host.find(id).State.Health?.Status;
    } catch {
      // the container was removed meanwhile: the next tick ends the loop
      return s.intervalMs;
    }
    return status === 'starting' ? s.startIntervalMs : s.intervalMs;
  }

  private schedule(id: string, loop: Loop): void {
    if (loop.stopped) return;
    loop.timer = setTimeout(() => void this.tick(id, loop), this.nextDelay(id, loop));
    loop.timer.unref();
  }

  private async tick(id: string, loop: Loop): Promise<void> {
    if (loop.stopped) return;
    let rec: ContainerRecord;
    try {
      rec = this.d.host.find(id);
    } catch {
      this.stopped(id);
      return;
    }
    if (!rec.State.Running) {
      this.stopped(id);
      return;
    }
    if (rec.State.Paused) {
      this.schedule(id, loop);
      return;
    }
    const result = await this.runProbe(id, loop.settings);
    if (loop.stopped) return;
    const current = rec.State.Health ?? startingHealth(undefined);
    const next = applyProbeResult(current, result, {
      retries: loop.settings.retries,
      startPeriodMs: loop.settings.startPeriodMs,
      containerStartedAt: loop.startedAt,
    });
    rec.State.Health = next;
    this.d.host.save(id);
    if (next.Status !== current.Status) this.report(id, next.Status);
    this.schedule(id, loop);
  }

  private async runProbe(id: string, s: HealthSettings): Promise<ProbeResult> {
    const start = isoNow();
    try {
      const r = await this.d.host.probe(id, s.command!, s.timeoutMs, MAX_OUTPUT_BYTES);
      if (r.timedOut) {
        // As current dockerd: what the probe printed before it was killed follows the message.
        const msg = `Health check exceeded timeout (${formatGoDuration(s.timeoutNs)})`;
        return { Start: start, End: isoNow(), ExitCode: -1, Output: r.output ? `${msg}: ${r.output}` : msg };
      }
      return { Start: start, End: isoNow(), ExitCode: r.exitCode, Output: r.output };
    } catch (err) {
      this.d.log.debug(`health check error: ${(err as Error).message}`, { id });
      return { Start: start, End: isoNow(), ExitCode: -1, Output: (err as Error).message };
    }
  }

  private report(id: string, status: HealthState['Status']): void {
    try {
      this.d.onStatus?.(id, status);
    } catch (err) {
      this.d.log.warn(`health status hook failed: ${(err as Error).message}`, { id });
    }
  }
}
