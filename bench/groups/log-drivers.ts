// The `logdrivers` group: an engined of its own (its journald driver pointed at the benchmark's
// journal socket) and, unless --no-dockerd, a dockerd beside it, busybox in each, then each log
// driver writing the same MiB on both daemons taking turns, the order reversed every other round so
// that load spreads over all of them. dockerd's journald writes to the host's journal socket alone:
// it runs only where that socket exists.

import { existsSync } from 'node:fs';
import { progress, type Iterations } from '../lib/options.ts';
import { startTracked, stopTracked } from '../lib/tracked.ts';
import type { Results } from '../results.ts';
import {
  DOCKERD_JOURNAL,
  LOG_DRIVERS,
  logDriverLine,
  logDriverOnce,
  runKey,
  startLogSinks,
  type LogDriverRun,
} from '../scenarios/log-drivers.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { Dockerd } from '../targets/dockerd.ts';
import { Engined } from '../targets/engined.ts';

/**
 * gelf writes a sixteenth: dockerd's gelf runs below 0.1 MiB/s here (a gzip writer made per
 * message), and the whole of the others would outlast the API's five-minute wait.
 */
export function driverMiB(driver: string, mib: number): number {
  return driver === 'gelf' ? Math.max(1, mib / 16) : mib;
}

export async function logDriversGroup(res: Results, it: Iterations, useDockerd = false): Promise<void> {
  const sinks = await startLogSinks();
  const drivers = LOG_DRIVERS.filter((x) => x !== 'journald' || sinks.journal);
  if (!sinks.journal) res.notes.push('log drivers: journald skipped (the native unixgram helper is not built)');
  const dockerdJournal = existsSync(DOCKERD_JOURNAL);
  if (useDockerd && !dockerdJournal) res.notes.push(`log drivers: dockerd's journald skipped (no ${DOCKERD_JOURNAL} on this host)`);
  const daemons: { kind: 'engined' | 'dockerd'; d: DaemonUnderTest }[] = [];
  try {
    progress('log drivers: starting engined');
    const env = { ...process.env, ...(sinks.journal ? { ENGINE_TEST_JOURNAL_SOCKET: sinks.journal } : {}) };
    const e = (await startTracked(() => Engined.start(env))).daemon;
    daemons.push({ kind: 'engined', d: e });
    await e.importBusybox();
    if (useDockerd) {
      progress('log drivers: starting dockerd');
      const d = (await startTracked(() => Dockerd.start())).daemon;
      daemons.push({ kind: 'dockerd', d });
      await d.loadBusybox();
    }
    const runs: Record<string, LogDriverRun[]> = {};
    progress(
      `log drivers: ${it.logDriverMiB} MiB each, ${it.logDriverRuns} rounds over ${drivers.join(', ')} on ${daemons.map((x) => x.kind).join(' and ')}`,
    );
    for (let k = 0; k < it.logDriverRuns; k++)
      for (const driver of k % 2 === 0 ? drivers : [...drivers].reverse())
        for (const { kind, d } of k % 2 === 0 ? daemons : [...daemons].reverse()) {
          if (kind === 'dockerd' && driver === 'journald' && !dockerdJournal) continue;
          const r = await logDriverOnce(d, sinks, driver, driverMiB(driver, it.logDriverMiB));
          progress(`log drivers: ${kind.padEnd(7)} ${logDriverLine(driver, r)}`);
          (runs[runKey(kind, driver)] ??= []).push(r);
        }
    res.logDrivers = runs;
  } finally {
    for (const { d } of daemons.reverse()) await stopTracked(d);
    sinks.close();
  }
}
