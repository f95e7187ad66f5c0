// Throughput of each log driver: a container writes MiB to stdout (`yes … | head -c`) with the
// driver, its receiver run here — a UDP sink for gelf, a TCP sink for syslog and fluentd, a unix
// datagram socket for journald (the daemon pointed at it by ENGINE_TEST_JOURNAL_SOCKET) — and the
// figures: wall time from start to exit, the daemon's CPU per MiB, and the bytes the receiver got
// (UDP and unix datagrams may be dropped by the kernel when the sink lags). Used by the `logdrivers`
// group of `npm run bench` and by the standalone bench/log-drivers.ts.

import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unixgramHelper } from '../../src/logging/remote/unixgram.ts';
import { api } from '../lib/http.ts';
import { cpuMs } from '../lib/proc.ts';
import { summarize } from '../lib/stats.ts';
import { num, ratio, table } from '../lib/table.ts';
import type { DaemonUnderTest } from '../targets/daemon.ts';
import { createContainer, removeContainer } from './api-lifecycle.ts';

export const LOG_DRIVERS = ['json-file', 'local', 'gelf', 'syslog', 'fluentd', 'journald'] as const;
const LINE = 'x'.repeat(99);

export interface LogDriverRun {
  mib: number;
  /** Start to exit, seconds. */
  s: number;
  /** The daemon's CPU over the run, ms. */
  cpuMs: number;
  /** What the receiver got, bytes (undefined for the file drivers). */
  received?: number;
}

/** The receivers, listening until close(); `config(driver)` is the driver's --log-opt. */
export interface LogSinks {
  /** The journal socket to give the daemon (ENGINE_TEST_JOURNAL_SOCKET); undefined without the native helper. */
  journal: string | undefined;
  config(driver: string): Record<string, string>;
  received: number;
  close(): void;
}

export async function startLogSinks(): Promise<LogSinks> {
  const sinks = { received: 0 } as LogSinks;
  const udp = createSocket('udp4');
  udp.on('message', (m) => (sinks.received += m.length));
  await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
  const tcp = createServer((s) => s.on('data', (d) => (sinks.received += d.length)));
  await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'engine-bench-journal-'));
  const journal = join(dir, 'socket');
  const h = unixgramHelper();
  const fd = h ? h.open(journal, true) : -1;
  let draining = fd >= 0;
  if (draining) {
    const buf = Buffer.alloc(256 << 10);
    const drain = (): void => {
      for (let n = h!.recv(fd, buf); n >= 0; n = h!.recv(fd, buf)) sinks.received += n;
      if (draining) setImmediate(drain); // a busy receiver: unix datagrams are flow-controlled, a slow one throttles the sender
    };
    drain();
  }
  const tcpPort = (tcp.address() as AddressInfo).port;
  const config: Record<string, Record<string, string>> = {
    gelf: { 'gelf-address': `udp://127.0.0.1:${udp.address().port}` },
    syslog: { 'syslog-address': `tcp://127.0.0.1:${tcpPort}` },
    fluentd: { 'fluentd-address': `127.0.0.1:${tcpPort}` },
  };
  sinks.journal = fd >= 0 ? journal : undefined;
  sinks.config = (driver) => config[driver] ?? {};
  sinks.close = () => {
    draining = false;
    udp.close();
    tcp.close();
    if (fd >= 0) h!.close(fd);
    rmSync(dir, { recursive: true, force: true });
  };
  return sinks;
}

/** One container writing `mib` MiB through `driver`, timed from start to exit. */
export async function logDriverOnce(d: DaemonUnderTest, sinks: LogSinks, driver: string, mib: number): Promise<LogDriverRun> {
  const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${mib * 1024 * 1024}`], {
    NetworkMode: 'none',
    LogConfig: { Type: driver, Config: sinks.config(driver) },
  });
  try {
    sinks.received = 0;
    const cpu0 = cpuMs(d.pid);
    const t0 = performance.now();
    await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
    await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
    const s = (performance.now() - t0) / 1000;
    await new Promise((r) => setTimeout(r, 300)); // the last datagrams
    const remote = driver !== 'json-file' && driver !== 'local';
    return { mib, s, cpuMs: cpuMs(d.pid) - cpu0, ...(remote ? { received: sinks.received } : {}) };
  } finally {
    await removeContainer(d, id).catch(() => undefined); // a failed removal leaves the container to the daemon's teardown
  }
}

/** One line for a terminal. */
export function logDriverLine(driver: string, r: LogDriverRun): string {
  const got = r.received === undefined ? '' : ` | receiver got ${(r.received / 1048576).toFixed(1)} MiB`;
  return `${driver.padEnd(9)} ${(r.mib / r.s).toFixed(1).padStart(6)} MiB/s (${r.s.toFixed(2)} s) | daemon CPU ${r.cpuMs.toFixed(0)} ms, ${(r.cpuMs / r.mib).toFixed(1)} ms/MiB${got}`;
}

/** The key of a daemon's runs: engined's under the driver's name, dockerd's under `dockerd <driver>`. */
export function runKey(kind: 'engined' | 'dockerd', driver: string): string {
  return kind === 'engined' ? driver : `dockerd ${driver}`;
}

/** Where dockerd's journald driver writes (sd_journal_send): it cannot be pointed elsewhere. */
export const DOCKERD_JOURNAL = '/run/systemd/journal/socket';

export function logDriversSection(runs: Record<string, LogDriverRun[]>): string {
  const rate = (rs: LogDriverRun[] | undefined) => (rs?.length ? summarize(rs.map((r) => r.mib / r.s)).median : undefined);
  const cpuPerMib = (rs: LogDriverRun[] | undefined) => (rs?.length ? rs.reduce((a, r) => a + r.cpuMs / r.mib, 0) / rs.length : undefined);
  const got = (rs: LogDriverRun[] | undefined) => {
    const g = (rs ?? []).filter((r) => r.received !== undefined);
    return g.length ? `${((100 * g.reduce((a, r) => a + r.received!, 0)) / g.reduce((a, r) => a + r.mib * 1048576, 0)).toFixed(0)}%` : '—';
  };
  const drivers = Object.keys(runs).filter((k) => !k.startsWith('dockerd '));
  const withDockerd = Object.keys(runs).some((k) => k.startsWith('dockerd '));
  const rows = drivers.map((driver) => {
    const e = runs[driver];
    const row = [driver, num(rate(e)), num(cpuPerMib(e), 1), ratio(cpuPerMib(e), cpuPerMib(runs['json-file'])), got(e)];
    if (!withDockerd) return row;
    const d = runs[runKey('dockerd', driver)];
    if (!d) return [...row, 'not run', '', '', '', ''];
    return [...row, num(rate(d)), num(cpuPerMib(d), 1), got(d), ratio(rate(e), rate(d)), ratio(cpuPerMib(e), cpuPerMib(d))];
  });
  const mib = Object.values(runs)[0]?.[0]?.mib ?? 0;
  const gelfMib = runs['gelf']?.[0]?.mib;
  const gelfNote = gelfMib !== undefined && gelfMib !== mib ? ` (gelf ${gelfMib} MiB)` : '';
  const head = ['driver', 'MiB/s', 'daemon CPU ms/MiB', '÷ json-file CPU', 'receiver got'];
  const dockerdHead = [
    'dockerd MiB/s',
    'dockerd CPU ms/MiB',
    'dockerd receiver got',
    'MiB/s engined ÷ dockerd',
    'CPU/MiB engined ÷ dockerd',
  ];
  return [
    `A container writes ${mib} MiB${gelfNote} of 100-byte lines to stdout with each driver in turn (${withDockerd ? 'engined and dockerd taking turns' : 'engined'}; receivers in the benchmark process: UDP for gelf, TCP for syslog and fluentd, a unix datagram socket for journald). MiB/s from start to exit (median); the daemon's CPU per MiB written (mean); the bytes the receiver got against the bytes written (a remote driver's frame adds its fields; UDP and datagrams can drop)${withDockerd ? `; dockerd's journald writes only to the host's journal (${DOCKERD_JOURNAL}), "not run" where there is none` : ''}:`,
    '',
    table(withDockerd ? [...head, ...dockerdHead] : head, rows),
  ].join('\n');
}
