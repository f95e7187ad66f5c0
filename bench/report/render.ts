// The whole report: a header (machine, load, versions, iterations), the side-by-side table, then
// each group's own sections.

import os from 'node:os';
import type { Iterations, Options } from '../lib/options.ts';
import { num, ratio, table } from '../lib/table.ts';
import type { Results } from '../results.ts';
import { clientSection } from '../scenarios/client-cli.ts';
import { removeSection } from '../scenarios/remove.ts';
import { soakSection } from '../scenarios/soak.ts';
import { logDriversSection } from '../scenarios/log-drivers.ts';
import { storageSection } from '../scenarios/storage.ts';
import type { StartupMarks } from '../targets/daemon.ts';
import { lifecycleSections } from './lifecycle.ts';
import { sideBySide, sum } from './summary.ts';

export interface RenderContext {
  opts: Options;
  it: Iterations;
  started: Date;
  loadBefore: string;
  loadAfter: string;
  versions: string[];
}

export function render(res: Results, ctx: RenderContext): string {
  const { it } = ctx;
  const cpu = os.cpus();
  const out: string[] = [`# engine benchmark${ctx.opts.quick ? ' (--quick)' : ''}`, ''];
  out.push(
    `${ctx.started.toISOString()} · ${cpu.length} CPUs (${cpu[0]?.model ?? '?'}), ${(os.totalmem() / 2 ** 30).toFixed(0)} GiB · kernel ${os.release()} · load average before ${ctx.loadBefore}, after ${ctx.loadAfter}`,
  );
  for (const v of ctx.versions) out.push(`- ${v}`);
  out.push(
    `- iterations: lifecycle ${it.warmups} warm-ups + ${it.n}; start-ups ${it.startups}; parallel runs ${it.parallelRuns}; list ${it.listWarmups} + ${it.listN}; logs runs ${it.logsRuns}; exec ${it.execWarmups} + ${it.execN}; cp runs ${it.cpRuns}; commit ${it.commitWarmups} + ${it.commitN}; pull ${it.pullWarmups} + ${it.pullN}; network ${it.netWarmups} + ${it.netN}`,
  );
  for (const n of res.notes) out.push(`- ${n}`);
  out.push('');
  const summary = sideBySide(res, it);
  if (summary) out.push(summary, '');
  if (res.startup.engined) out.push(...startupSection(res.startup.engined, res.startup.dockerd));
  out.push(...lifecycleSections(res.lifecycle));
  const section = (title: string, body: string) => out.push(`## ${title}`, '', body, '');
  if (res.remove.engined || res.remove.dockerd)
    section('Removing created containers: per container, at two counts', removeSection(res.remove));
  if (res.soak) section('Soak: sequential lifecycles, first vs last', soakSection(res.soak));
  if (res.logDrivers) section('Log drivers (a daemon of its own, each driver in turn)', logDriversSection(res.logDrivers));
  if (res.storage)
    section('Storage drivers: overlay2, btrfs and fuse-overlayfs (daemons of their own, taking turns)', storageSection(res.storage));
  if (res.client) section('The engine CLI vs the docker CLI 28, both at engined', clientSection(res.client, it.clientN, it.clientWarmups));
  if (res.memory.length) section('Idle resident memory (VmRSS, MiB)', memoryTable(res.memory));
  const details = detailLines(res, it);
  if (details.length) out.push('## Details', '', ...details, '');
  out.push(
    'Medians and p90 (nearest rank) over the recorded iterations; ratios are of medians. Other work on the machine shows up as noise: compare within one run.',
  );
  return out.join('\n');
}

function startupSection(engined: StartupMarks[], dockerd: StartupMarks[] | undefined): string[] {
  const mark = (xs: StartupMarks[] | undefined, k: keyof StartupMarks) =>
    num(sum(xs?.map((m) => m[k]).filter((v): v is number => v !== undefined))?.median);
  const milestones = [
    ['"Starting up" logged (runtime up, code loaded)', 'startingUp'],
    ['its containerd "successfully booted"', 'containerdBooted'],
    ['"Daemon has completed initialization"', 'initialized'],
    ['/_ping answers 200', 'ping'],
    ['CPU ms used by then: the daemon', 'daemonCpu'],
    ['CPU ms used by then: its containerd', 'containerdCpu'],
  ] as const;
  return [
    "### Start-up milestones, ms after spawn (median; from the daemons' own log timestamps), and CPU used",
    '',
    table(
      ['milestone', 'engined', 'dockerd'],
      milestones.map(([label, k]) => [label, mark(engined, k), mark(dockerd, k)]),
    ),
    '',
  ];
}

function memoryTable(memory: Results['memory']): string {
  return table(
    ['when', 'engined', '+ its containerd', '= total', 'dockerd', '+ its containerd', '= total', 'ours/dockerd'],
    memory.map((m) => {
      const et = m.engined && m.engined.daemon + m.engined.containerd;
      const dt = m.dockerd && m.dockerd.daemon + m.dockerd.containerd;
      return [
        m.when,
        num(m.engined?.daemon, 1),
        num(m.engined?.containerd, 1),
        num(et, 1),
        num(m.dockerd?.daemon, 1),
        num(m.dockerd?.containerd, 1),
        num(dt, 1),
        ratio(et, dt),
      ];
    }),
  );
}

function detailLines(res: Results, it: Iterations): string[] {
  const out: string[] = [];
  for (const kind of ['engined', 'dockerd'] as const) {
    const runs = res.logs[kind];
    if (runs)
      out.push(
        `- logs, ${kind}: ${runs.map((r) => `write ${(r.writeMs / 1000).toFixed(2)} s, read ${(r.readMs / 1000).toFixed(2)} s (${(r.readBytes / 2 ** 20).toFixed(1)} MiB on the wire, ${(r.readBytes / 2 ** 20 / (r.readMs / 1000)).toFixed(0)} MiB/s)`).join('; ')}`,
      );
  }
  for (const kind of ['engined', 'dockerd'] as const) {
    const l = res.list[kind];
    if (l)
      out.push(
        `- list, ${kind}: ${l.listed} containers listed; create all ${(l.createAllMs / 1000).toFixed(1)} s (${(l.createAllMs / it.listContainers).toFixed(1)} ms each at 8 in flight), remove all ${(l.removeAllMs / 1000).toFixed(1)} s`,
      );
  }
  return out;
}
