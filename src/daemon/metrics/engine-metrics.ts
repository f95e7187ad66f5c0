// The daemon's Prometheus metrics (`--metrics-addr`, experimental): dockerd's families under the
// engine_ prefix — daemon info, container actions and their durations, container states, events,
// network actions, health checks, builds — plus per-container CPU, memory, network and block I/O read from
// the stats sampler at scrape time, labelled by container name and id, so a scrape can replace
// `docker stats` (those families and the builder's in families.ts). prom-client renders the text format.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { builderFamilies, perContainerFamilies } from './families.ts';
import type { MetricsSources } from './sources.ts';

/** Seconds buckets as dockerd's container action histograms. */
const ACTION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

export class EngineMetrics {
  readonly registry = new Registry();
  private readonly containerActions: Histogram<'action'>;
  private readonly networkActions: Histogram<'action'>;
  private readonly unsubscribe: () => void;
  private readonly healthChecks: Counter;
  private readonly healthChecksFailed: Counter;
  /** The builder's counts (dockerd's builder_builds_triggered and builder_builds_failed{reason}). */
  readonly builds: { triggered(): void; failed(reason: string): void };

  constructor(src: MetricsSources) {
    const r = [this.registry];
    new Gauge({
      name: 'engine_daemon_engine_info',
      help: 'The information related to the engine and the OS it is running on',
      labelNames: Object.keys(src.info),
      registers: r,
    }).set(src.info, 1);
    this.containerActions = new Histogram({
      name: 'engine_daemon_container_actions_seconds',
      help: 'The number of seconds it takes to process each container action',
      labelNames: ['action'],
      buckets: ACTION_BUCKETS,
      registers: r,
    });
    this.networkActions = new Histogram({
      name: 'engine_daemon_network_actions_seconds',
      help: 'The number of seconds it takes to process each network action',
      labelNames: ['action'],
      buckets: ACTION_BUCKETS,
      registers: r,
    });
    const events = new Counter({
      name: 'engine_daemon_events_total',
      help: 'The number of events logged',
      labelNames: ['type', 'action'],
      registers: r,
    });
    this.healthChecks = new Counter({ name: 'engine_daemon_health_checks_total', help: 'The total number of health checks', registers: r });
    this.healthChecksFailed = new Counter({
      name: 'engine_daemon_health_checks_failed_total',
      help: 'The total number of failed health checks',
      registers: r,
    });
    // "exec_start: sh -c …" counts as exec_start: the family is the action, not its argument.
    this.unsubscribe = src.subscribeEvents((ev) => events.inc({ type: ev.Type, action: ev.Action.split(':')[0] ?? ev.Action }));
    new Gauge({
      name: 'engine_daemon_container_states_containers',
      help: 'The count of containers in various states',
      labelNames: ['state'],
      registers: r,
      collect() {
        const counts = { running: 0, paused: 0, stopped: 0 };
        for (const c of src.containers()) counts[c.state]++;
        for (const [state, n] of Object.entries(counts)) this.set({ state }, n);
      },
    });
    this.builds = builderFamilies(r);
    perContainerFamilies(r, src);
  }

  /** Wraps `backend` so the listed methods are timed into the container or network histogram. */
  timed<T extends object>(backend: T, family: 'container' | 'network', actions: Partial<Record<keyof T & string, string>>): T {
    const hist = family === 'container' ? this.containerActions : this.networkActions;
    return new Proxy(backend, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver) as unknown;
        const action = typeof prop === 'string' ? (actions as Record<string, string | undefined>)[prop] : undefined;
        if (!action || typeof value !== 'function')
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        return (...args: unknown[]) => {
          const end = hist.startTimer({ action });
          const out = (value as (...a: unknown[]) => unknown).apply(target, args);
          if (out instanceof Promise) return out.finally(() => end());
          end();
          return out;
        };
      },
    });
  }

  /** Counts a health probe: every one, and those that failed (non-zero exit or timeout). */
  async healthCheck<T extends { exitCode: number; timedOut: boolean }>(probe: Promise<T>): Promise<T> {
    this.healthChecks.inc();
    try {
      const r = await probe;
      if (r.exitCode !== 0 || r.timedOut) this.healthChecksFailed.inc();
      return r;
    } catch (err) {
      this.healthChecksFailed.inc();
      throw err;
    }
  }

  async render(): Promise<{ contentType: string; text: string }> {
    return { contentType: this.registry.contentType, text: await this.registry.metrics() };
  }

  close(): void {
    this.unsubscribe();
  }
}
