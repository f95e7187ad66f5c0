// The `logdrivers` group: an engined of its own (its journald driver pointed at the benchmark's
// journal socket), busybox imported, then each log driver in turn writing the same MiB, the order
// reversed every other round so that load spreads over all of them.

import { progress, type Iterations } from '../lib/options.ts';
import { startTracked, stopTracked } from '../lib/tracked.ts';
import type { Results } from '../results.ts';
import { LOG_DRIVERS, logDriverLine, logDriverOnce, startLogSinks, type LogDriverRun } from '../scenarios/log-drivers.ts';
import { Engined } from '../targets/engined.ts';

export async function logDriversGroup(res: Results, it: Iterations): Promise<void> {
  const sinks = await startLogSinks();
  const drivers = LOG_DRIVERS.filter((x) => x !== 'journald' || sinks.journal);
  if (!sinks.journal) res.notes.push('log drivers: journald skipped (the native unixgram helper is not built)');
  try {
    progress('log drivers: starting engined');
    const env = { ...process.env, ...(sinks.journal ? { ENGINE_TEST_JOURNAL_SOCKET: sinks.journal } : {}) };
    const d = (await startTracked(() => Engined.start(env))).daemon;
    try {
      await d.importBusybox();
      const runs: Record<string, LogDriverRun[]> = Object.fromEntries(drivers.map((x) => [x, []]));
      progress(`log drivers: ${it.logDriverMiB} MiB each, ${it.logDriverRuns} rounds over ${drivers.join(', ')}`);
      for (let k = 0; k < it.logDriverRuns; k++)
        for (const driver of k % 2 === 0 ? drivers : [...drivers].reverse()) {
          const r = await logDriverOnce(d, sinks, driver, it.logDriverMiB);
          progress(`log drivers: ${logDriverLine(driver, r)}`);
          runs[driver]!.push(r);
        }
      res.logDrivers = runs;
    } finally {
      await stopTracked(d);
    }
  } finally {
    sinks.close();
  }
}
