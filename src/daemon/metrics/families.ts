// The metric families filled from outside the event stream: the builder's counts, and the
// per-container CPU, memory, network, block I/O and pids counters read from the stats sampler
// when scraped, labelled by container name and id.
import { Counter, Gauge, type Registry } from 'prom-client';
import { BUILD_FAILURE_REASONS } from '../../build/failure-reason.ts';
import type { U64 } from '../stats/wire.ts';
import type { MetricsSources } from './sources.ts';

const num = (v: U64 | undefined): number => (v === undefined ? 0 : Number(v));

/** The builder's counts (dockerd's builder_builds_triggered and builder_builds_failed{reason}). */
export function builderFamilies(r: Registry[]): { triggered(): void; failed(reason: string): void } {
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
export function perContainerFamilies(r: Registry[], src: Pick<MetricsSources, 'containers' | 'sample'>): void {
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
