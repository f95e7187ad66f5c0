// Throughput of the log drivers: a container writes MiB to stdout (`yes … | head -c`) with each
// driver in turn, its receiver run here (a UDP sink for gelf, TCP sinks for syslog and fluentd, a
// unix datagram socket for journald); the wall time from start to exit, the daemon's CPU, and the
// bytes the receiver got (UDP and unix datagrams may be dropped by the kernel when the sink lags).
//   bin/node dist/bench/log-drivers.js [MiB=64] [runs=2] [drivers=json-file,local,gelf,syslog,fluentd,journald]

import { createSocket } from 'node:dgram';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unixgramHelper } from '../src/logging/remote/unixgram.ts';
import { api } from './lib/http.ts';
import { cpuMs, loadAverage } from './lib/proc.ts';
import { createContainer, removeContainer } from './scenarios/api-lifecycle.ts';
import { Engined } from './targets/engined.ts';

const LINE = 'x'.repeat(99);
const mib = Number(process.argv[2] ?? 64);
const runs = Number(process.argv[3] ?? 2);
const drivers = (process.argv[4] ?? 'json-file,local,gelf,syslog,fluentd,journald').split(',');
const bytes = mib * 1024 * 1024;

let received = 0;
const udp = createSocket('udp4');
udp.on('message', (m) => (received += m.length));
await new Promise<void>((r) => udp.bind(0, '127.0.0.1', r));
const tcp = createServer((s) => s.on('data', (d) => (received += d.length)));
await new Promise<void>((r) => tcp.listen(0, '127.0.0.1', r));
const dir = mkdtempSync(join(tmpdir(), 'engine-bench-journal-'));
const journal = join(dir, 'socket');
const h = unixgramHelper();
const fd = h ? h.open(journal, true) : -1;
let draining = true;
if (fd >= 0) {
  const buf = Buffer.alloc(256 << 10);
  const drain = (): void => {
    for (let n = h!.recv(fd, buf); n >= 0; n = h!.recv(fd, buf)) received += n;
    if (draining) setImmediate(drain); // a busy receiver: unix datagrams are flow-controlled, a slow one throttles the sender
  };
  drain();
}

const tcpPort = (tcp.address() as AddressInfo).port;
const config: Record<string, Record<string, string>> = {
  'json-file': {},
  local: {},
  gelf: { 'gelf-address': `udp://127.0.0.1:${udp.address().port}` },
  syslog: { 'syslog-address': `tcp://127.0.0.1:${tcpPort}` },
  fluentd: { 'fluentd-address': `127.0.0.1:${tcpPort}` },
  journald: {},
};

const { daemon: d } = await Engined.start({ ENGINE_TEST_JOURNAL_SOCKET: journal });
try {
  await d.loadBusybox();
  for (let k = 0; k < runs; k++) {
    for (const driver of k % 2 === 0 ? drivers : [...drivers].reverse()) {
      const id = await createContainer(d, ['sh', '-c', `yes ${LINE} | head -c ${bytes}`], {
        NetworkMode: 'none',
        LogConfig: { Type: driver, Config: config[driver] ?? {} },
      });
      received = 0;
      const cpu0 = cpuMs(d.pid);
      const t0 = performance.now();
      await api(d.socket, 'POST', `/containers/${id}/start`, undefined, [204]);
      await api(d.socket, 'POST', `/containers/${id}/wait`, undefined, [200]);
      const s = (performance.now() - t0) / 1000;
      await new Promise((r) => setTimeout(r, 300)); // the last datagrams
      const cpu = cpuMs(d.pid) - cpu0;
      const got = driver === 'json-file' || driver === 'local' ? '' : ` | receiver got ${(received / 1048576).toFixed(1)} MiB`;
      console.log(
        `${driver.padEnd(9)} ${(mib / s).toFixed(1).padStart(6)} MiB/s (${s.toFixed(2)} s) | daemon CPU ${cpu.toFixed(0)} ms${got} | load ${loadAverage()}`,
      );
      await removeContainer(d, id).catch(() => undefined);
    }
  }
} finally {
  draining = false;
  await d.stop();
  udp.close();
  tcp.close();
  if (fd >= 0) h!.close(fd);
  rmSync(dir, { recursive: true, force: true });
}
