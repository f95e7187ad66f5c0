// The report's lifecycle sections: one container's lifecycle against the containerd and runc
// floors, where its time goes per API call, and the floor's own phases.

import { num, ratio, table } from '../lib/table.ts';
import type { Results } from '../results.ts';
import type { ApiPhases } from '../scenarios/api-lifecycle.ts';
import type { FloorPhases } from '../scenarios/floor.ts';
import { col, sum } from './summary.ts';

export function lifecycleSections(lc: Results['lifecycle']): string[] {
  if (!lc.enginedNone) return [];
  const out: string[] = [];
  const total = (xs: ApiPhases[] | FloorPhases[] | undefined) => sum(col<ApiPhases | FloorPhases>(xs, (p) => p.total));
  const ours = total(lc.enginedNone)!;
  const floorRows = [
    ['engined, network none', ours],
    ['engined, default network', total(lc.enginedDefault)],
    ['dockerd 20.10, network none', total(lc.dockerdNone)],
    ['bare containerd lifecycle from Node (floor; lifecycle-test spec)', total(lc.floor)],
    ["the same floor with engined's own spec (seccomp, masks, cgroupns, /etc binds)", total(lc.floorEnginedSpec)],
    ['`runc run` (spawned from Node)', sum(lc.runc)],
    ['for scale: one helper process from Node (execFile true)', sum(lc.spawn)],
  ] as const;
  out.push('## Single lifecycle of `true` in busybox (ms)', '');
  out.push(
    table(
      ['', 'median', 'p90', 'min', 'engined (none) ÷ this'],
      floorRows.flatMap(([l, s]) => (s ? [[l, num(s.median), num(s.p90), num(s.min), ratio(ours.median, s.median)]] : [])),
    ),
  );
  const floor = total(lc.floor);
  if (floor) {
    const shown = (ours.median / floor.median).toFixed(2);
    out.push(
      '',
      `Target (issue 16: within 1.1× of the bare containerd lifecycle): engined (network none) / floor = ${shown}× → ${Number(shown) <= 1.1 ? 'met' : 'NOT met'}; ${num(ours.median - floor.median)} ms above the floor.`,
    );
    const same = total(lc.floorEnginedSpec);
    if (same)
      out.push(
        `With engined's own spec in the floor (so only the daemon's own work differs): ${(ours.median / same.median).toFixed(2)}×, ${num(ours.median - same.median)} ms above it.`,
      );
  }
  out.push('');

  const phase = (xs: ApiPhases[] | undefined, k: Exclude<keyof ApiPhases, 'cpu'>) => num(sum(col(xs, (p) => p[k]))?.median);
  const cpuMean = (xs: ApiPhases[] | undefined, k: 'daemon' | 'containerd') => num(sum(col(xs, (p) => p.cpu[k]))?.mean, 1);
  const kinds = [lc.enginedNone, lc.enginedDefault, lc.dockerdNone];
  const callName = {
    create: 'POST /containers/create',
    start: 'POST /containers/{id}/start',
    wait: 'POST /containers/{id}/wait',
    delete: 'DELETE /containers/{id}',
    total: 'total',
  };
  out.push('### Where the time goes: API calls, median ms', '');
  out.push(
    table(
      ['call', 'engined none', 'engined default', 'dockerd none'],
      [
        ...(['create', 'start', 'wait', 'delete', 'total'] as const).map((k) => [callName[k], ...kinds.map((xs) => phase(xs, k))]),
        ['CPU ms used by the daemon per lifecycle (mean)', ...kinds.map((xs) => cpuMean(xs, 'daemon'))],
        ['CPU ms used by its containerd per lifecycle (mean)', ...kinds.map((xs) => cpuMean(xs, 'containerd'))],
      ],
    ),
  );
  out.push('');
  if (lc.floor) {
    const f = (xs: FloorPhases[] | undefined, k: keyof FloorPhases) => num(sum(col(xs, (p) => p[k]))?.median);
    const phases = [
      ['Snapshots.Prepare + Containers.Create', 'prepareAndCreate'],
      ['mkfifo (execFile) + open readers', 'fifos'],
      ['Tasks.Create', 'taskCreate'],
      ['Tasks.Start', 'start'],
      ['Tasks.Wait + output EOF', 'wait'],
      ['Tasks.Delete + Containers.Delete + Snapshots.Remove + rm FIFOs', 'cleanup'],
      ['total', 'total'],
    ] as const;
    out.push("### The floor's phases, median ms", '');
    out.push(
      table(
        ['phase', 'lifecycle-test spec', "engined's spec"],
        phases.map(([label, k]) => [label, f(lc.floor, k), f(lc.floorEnginedSpec, k)]),
      ),
    );
    out.push('');
  }
  return out;
}
