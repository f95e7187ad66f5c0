// Throughput of the log drivers, standalone (the `logdrivers` group of `npm run bench` runs the
// same scenario, scenarios/log-drivers.ts): a container writes MiB to stdout with each driver in
// turn, its receiver run here; MiB/s, the daemon's CPU per MiB, the bytes the receiver got.
//   bin/node dist/bench/log-drivers.js [MiB=64] [runs=2] [drivers=json-file,local,gelf,syslog,fluentd,journald]

import { loadAverage } from './lib/proc.ts';
import { LOG_DRIVERS, logDriverLine, logDriverOnce, logDriversSection, startLogSinks, type LogDriverRun } from './scenarios/log-drivers.ts';
import { Engined } from './targets/engined.ts';

const mib = Number(process.argv[2] ?? 64);
const runs = Number(process.argv[3] ?? 2);
const drivers = (process.argv[4] ?? LOG_DRIVERS.join(',')).split(',');

const sinks = await startLogSinks();
const { daemon: d } = await Engined.start(sinks.journal ? { ...process.env, ENGINE_TEST_JOURNAL_SOCKET: sinks.journal } : undefined);
try {
  await d.loadBusybox();
  const all: Record<string, LogDriverRun[]> = Object.fromEntries(drivers.map((x) => [x, []]));
  for (let k = 0; k < runs; k++) {
    for (const driver of k % 2 === 0 ? drivers : [...drivers].reverse()) {
      const r = await logDriverOnce(d, sinks, driver, mib);
      all[driver]!.push(r);
      console.log(`${logDriverLine(driver, r)} | load ${loadAverage()}`);
    }
  }
  console.log(`\n${logDriversSection(all)}`);
} finally {
  await d.stop();
  sinks.close();
}
