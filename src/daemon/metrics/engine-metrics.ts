// The daemon's Prometheus metrics (`--metrics-addr`, experimental): dockerd's families under the
// engine_ prefix — daemon info, container actions and their durations, container states, events,
// network actions, health checks, builds — plus per-container CPU, memory, network and block I/O read from
// the stats sampler at scrape time, labelled by container name and id, so a scrape can replace
// `docker stats`. prom-client renders the text format.
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import { BUILD_FAILURE_REASONS } from '../../build/failure-reason.ts';
import type { EngineEvent } from '../../types/events.ts';
import type { Sample, U64 } from '../stats/wire.ts';

export interface MetricsContainer {
  id: string;
  /** Without the leading slash. */
  name: string;
  state: 'running' | 'paused' | 'stopped';
}

export interface MetricsSources {
  info: Record<string, string>;
  containers(): MetricsContainer[];
  /** A reading of a running container's counters, or undefined. */
  sample(id: string): Sample | undefined;
  subscribeEvents(fn: (ev: EngineEvent) => void): () => void;
}

const num = (v: U64 | undefined): number => (v === undefined ? 0 : Number(v));

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

  constructor(private readonly src: MetricsSources) {
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
    this.builds = this.builderFamilies(r);
    this.perContainer(r);
  }

  private builderFamilies(r: Registry[]): { triggered(): void; failed(reason: string): void } {
    const triggered = new Counter({
      name: 'engine_builder_builds_triggered_total',
      help: 'Number of triggered image builds',
      registers: r,
    });
    const failed = new Counter({
      name: 'engine_builder_builds_failed_total',
      help: 'Number of failed image builds',
      labelNames: ['reason'],
      registers: r,
    });
    // As dockerd: every reason is exported from the start, at 0.
    for (const reason of BUILD_FAILURE_REASONS) failed.inc({ reason }, 0);
    return { triggered: () => triggered.inc(), failed: (reason) => failed.inc({ reason }) };
  }

  /** Per-container counters, read when scraped (nothing is sampled between scrapes). */
  private perContainer(r: Registry[]): void {
    const labelNames = ['name', 'id'] as const;
    const cpu = new Counter({
      name: 'engine_container_cpu_usage_seconds_total',
      help: 'CPU time the container used (user and system)',
      labelNames,
      registers: [],
    });
    const cpuUser = new Counter({
      name: 'engine_container_cpu_user_seconds_total',
      help: 'CPU time the container used in user mode',
      labelNames,
      registers: [],
    });
    const cpuSys = new Counter({
      name: 'engine_container_cpu_system_seconds_total',
      help: 'CPU time the container used in kernel mode',
      labelNames,
      registers: [],
    });
    const mem = new Gauge({ name: 'engine_container_memory_usage_bytes', help: 'Memory the container uses', labelNames, registers: [] });
    const memLimit = new Gauge({
      name: 'engine_container_memory_limit_bytes',
      help: "The container's memory limit",
      labelNames,
      registers: [],
    });
    const rx = new Counter({
      name: 'engine_container_network_receive_bytes_total',
      help: "Bytes received on the container's interfaces",
      labelNames: [...labelNames, 'interface'],
      registers: [],
    });
    const tx = new Counter({
      name: 'engine_container_network_transmit_bytes_total',
      help: "Bytes sent on the container's interfaces",
      labelNames: [...labelNames, 'interface'],
      registers: [],
    });
    const blkRead = new Counter({
      name: 'engine_container_blkio_read_bytes_total',
      help: 'Bytes read from block devices',
      labelNames,
      registers: [],
    });
    const blkWrite = new Counter({
      name: 'engine_container_blkio_write_bytes_total',
      help: 'Bytes written to block devices',
      labelNames,
      registers: [],
    });
    const pids = new Gauge({ name: 'engine_container_pids', help: 'Processes in the container', labelNames, registers: [] });
    const src = this.src;
    // One collect() refreshes every per-container family: they are reset so removed containers go.
    const families = [cpu, cpuUser, cpuSys, mem, memLimit, rx, tx, blkRead, blkWrite, pids];
    // Registered first: the registry reads metrics in order, so this collect() runs before the
    // families it fills are read.
    new Gauge({
      name: 'engine_containers_sampled',
      help: 'Running containers whose counters this scrape read',
      registers: r,
      collect() {
        for (const f of families) f.reset();
        let n = 0;
        for (const c of src.containers()) {
          if (c.state === 'stopped') continue;
          const s = src.sample(c.id);
          if (!s) continue;
          n++;
          const l = { name: c.name, id: c.id };
          cpu.inc(l, num(s.cpu.cpu_usage.total_usage) / 1e9);
          cpuUser.inc(l, num(s.cpu.cpu_usage.usage_in_usermode) / 1e9);
          cpuSys.inc(l, num(s.cpu.cpu_usage.usage_in_kernelmode) / 1e9);
          mem.set(l, num(s.memory.usage));
          memLimit.set(l, num(s.memory.limit));
          pids.set(l, num(s.pids.current));
          for (const [ifname, net] of Object.entries(s.networks ?? {})) {
            rx.inc({ ...l, interface: ifname }, num(net.rx_bytes));
            tx.inc({ ...l, interface: ifname }, num(net.tx_bytes));
          }
          for (const e of s.blkio.io_service_bytes_recursive ?? []) {
            const op = e.op.toLowerCase();
            if (op === 'read') blkRead.inc(l, num(e.value));
            if (op === 'write') blkWrite.inc(l, num(e.value));
          }
        }
        this.set(n);
      },
    });
    for (const f of families) r[0]!.registerMetric(f);
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
