// The report's side-by-side table: one row per figure, engined's median and p90 beside dockerd's,
// and their ratio. Rows whose group did not run are left out.

import type { Iterations } from '../lib/options.ts';
import { median, summarize, type Summary } from '../lib/stats.ts';
import { num, ratio, table } from '../lib/table.ts';
import type { Pair, Results } from '../results.ts';
import type { ListResult } from '../scenarios/list.ts';
import { LOG_BYTES } from '../scenarios/logs.ts';
import { PULL_LAYERS } from '../scenarios/pull.ts';

type Unit = 'ms' | 's' | '×' | 'µs';
type Column = number[] | undefined;

export const sum = (xs: Column): Summary | undefined => (xs && xs.length ? summarize(xs) : undefined);
export const col = <T>(xs: T[] | undefined, f: (x: T) => number): Column => (xs ? xs.map(f) : undefined);
/** The same figure of engined (or an engined variant) and of dockerd. */
const pick = <T>(p: Pair<T>, f: (x: T) => number, ours: T[] | undefined = p.engined): [Column, Column] => [col(ours, f), col(p.dockerd, f)];

export function sideBySide(res: Results, it: Iterations): string | null {
  const rows: string[][] = [];
  const row = (label: string, unit: Unit, [ours, theirs]: [Column, Column]) => {
    const k = unit === 's' ? 1 / 1000 : 1;
    const a = sum(ours);
    const b = sum(theirs);
    if (!a && !b) return;
    rows.push([
      `${label} (${unit})`,
      num(a && a.median * k),
      num(a && a.p90 * k),
      num(b && b.median * k),
      num(b && b.p90 * k),
      ratio(a?.median, b?.median),
    ]);
  };
  const lc = res.lifecycle;
  row(
    'start-up: spawn → /_ping 200, containerd included',
    'ms',
    pick(res.startup, (m) => m.ping),
  );
  row('lifecycle of `true`, network none: create→start→wait→delete', 'ms', [
    col(lc.enginedNone, (p) => p.total),
    col(lc.dockerdNone, (p) => p.total),
  ]);
  row('lifecycle of `true`, default network (ours: own netns, lo only)', 'ms', [col(lc.enginedDefault, (p) => p.total), undefined]);
  row('50 lifecycles, 8 at a time: wall', 'ms', [res.parallel.engined, res.parallel.dockerd]);
  listRows(row, res.list.engined, res.list.dockerd, it);
  const mib = LOG_BYTES / 2 ** 20;
  row(
    `${mib} MiB to stdout: start → exit`,
    's',
    pick(res.logs, (r) => r.writeMs),
  );
  row(
    '  floor: the same writer to a file in the container, start → exit',
    's',
    pick(res.logs, (r) => r.floorMs),
  );
  row(
    '  to stdout ÷ its floor (same daemon, same run)',
    '×',
    pick(res.logs, (r) => r.writeMs / r.floorMs),
  );
  row(
    `${mib} MiB of logs read back (GET logs, whole stream)`,
    's',
    pick(res.logs, (r) => r.readMs),
  );
  row(
    '  daemon CPU while the container writes them',
    's',
    pick(res.logs, (r) => r.writeCpu),
  );
  row(
    '  daemon CPU while they are read back',
    's',
    pick(res.logs, (r) => r.readCpu),
  );
  row('exec of `true` in a running container: create → start (hijacked) → inspect', 'ms', [res.exec.engined, res.exec.dockerd]);
  row(
    'docker cp of 100 MiB (300 files) into a running container',
    'ms',
    pick(res.cp, (r) => r.inMs),
  );
  row(
    'docker cp of the same 100 MiB back out',
    'ms',
    pick(res.cp, (r) => r.outMs),
  );
  type Costed = { ms: number; cpu: { daemon: number; containerd: number } };
  const both = (r: Costed) => r.cpu.daemon + r.cpu.containerd;
  const wall = (r: Costed) => r.ms;
  row('commit of a stopped container that wrote 10 MiB (POST /commit)', 'ms', pick(res.commit, wall));
  row('  CPU of the daemon + its containerd during the commit', 'ms', pick(res.commit, both));
  row(
    '    of which its containerd',
    'ms',
    pick(res.commit, (r) => r.cpu.containerd),
  );
  row(
    "  the same, engined on containerd's diff service (ENGINE_COMMIT_DIFF=service, the path before)",
    'ms',
    pick(res.commit, wall, res.commit.service),
  );
  row('    its CPU (daemon + its containerd)', 'ms', pick(res.commit, both, res.commit.service));
  const mb = res.pull.mb?.toFixed(0) ?? '?';
  row(`pull ${mb} MB in ${PULL_LAYERS} layers from a local registry (POST /images/create)`, 'ms', pick(res.pull, wall));
  row('  CPU of the daemon + its containerd during the pull', 'ms', pick(res.pull, both));
  row(
    "  the same, engined on containerd's diff service (ENGINE_PULL_UNPACK=service, the path before)",
    'ms',
    pick(res.pull, wall, res.pull.service),
  );
  row('    its CPU (daemon + its containerd)', 'ms', pick(res.pull, both, res.pull.service));
  const p = res.ping;
  row('GET /_ping, curl time_total over the unix socket', 'ms', [p['engined-ping'], p['dockerd-ping']]);
  row('GET /containers/json with no containers, curl time_total', 'ms', [p['engined-list'], p['dockerd-list']]);
  row('  daemon CPU per /_ping (mean of 200)', 'µs', [p['engined-ping-cpu'], p['dockerd-ping-cpu']]);
  row('  daemon CPU per GET /containers/json (mean of 200)', 'µs', [p['engined-list-cpu'], p['dockerd-list-cpu']]);
  const net = res.network;
  row('network: API lifecycle of `true`, network none', 'ms', [net.enginedApiNone, net.dockerdApiNone]);
  row('network: API lifecycle of `true`, default bridge', 'ms', [net.enginedApiBridge, net.dockerdApiBridge]);
  row('network: `docker run --rm --network none busybox true`', 'ms', [net.enginedCliNone, net.dockerdCliNone]);
  row('network: `docker run --rm busybox true` (default bridge)', 'ms', [net.enginedCliBridge, net.dockerdCliBridge]);
  if (!rows.length) return null;
  return ['## Side by side', '', table(['', 'engined median', 'p90', 'dockerd median', 'p90', 'ours/dockerd'], rows)].join('\n');
}

/** Create, list (and its slope to 10 000 containers) and remove-all rows of the list group. */
function listRows(
  row: (label: string, unit: Unit, cols: [Column, Column]) => void,
  le: ListResult | undefined,
  ld: ListResult | undefined,
  it: Iterations,
) {
  row(`create ${it.listContainers} containers, 8 at a time: wall`, 'ms', [le && [le.createAllMs], ld && [ld.createAllMs]]);
  row(`GET /containers/json?all=1 with ${it.listContainers} containers`, 'ms', [le?.listMs, ld?.listMs]);
  if (le?.scale || ld?.scale) {
    row(`GET /containers/json?all=1 with ${it.listScaleTo} containers`, 'ms', [le?.scale?.listMs, ld?.scale?.listMs]);
    // Medians' difference over the containers added: the cost of one more container, and 10 000 from it.
    const slope = (l?: ListResult) =>
      l?.scale && ((median(l.scale.listMs) - median(l.listMs)) / (l.scale.containers - it.listContainers)) * 1000;
    const at10k = (l?: ListResult) => l?.scale && median(l.scale.listMs) + (slope(l)! / 1000) * (10_000 - l.scale.containers);
    row('  per container, from the two medians', 'µs', [le?.scale && [slope(le)!], ld?.scale && [slope(ld)!]]);
    row('  projected for 10 000 containers', 'ms', [le?.scale && [at10k(le)!], ld?.scale && [at10k(ld)!]]);
  }
  row(`remove them all (${it.listScaleTo || it.listContainers}), 8 at a time: wall`, 'ms', [
    le && [le.removeAllMs],
    ld && [ld.removeAllMs],
  ]);
}
