// The syslog driver, as dockerd sends through srslog: one message per entry, severity info (6) for
// stdout and err (3) for stderr under the chosen facility (daemon by default), the message ended by a
// newline. Formats: the default is srslog's unix form `<PRI>Mmm dd hh:mm:ss tag[pid]: msg`; rfc3164
// adds the hostname after the time; rfc5424 and rfc5424micro are `<PRI>1 time host tag pid tag - msg`
// (with microseconds for the latter), length-prefixed (RFC 5425) over tcp+tls. Transports: udp, tcp,
// tcp+tls (syslog-tls-* files), unix (stream), unixgram (datagrams on a unix socket, through the
// native helper of unixgram.ts), and by default srslog's local syslog (unixgram, then unix, on
// /dev/log, /var/run/syslog, /var/run/log).

import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { goTimeStamp, rfc3339Local } from './go-time.ts';
import { logTag } from './attrs.ts';
import { RemoteLogDriver, type RemoteFactoryOptions, type RemoteRecord } from './driver.ts';
import { DatagramTransport, StreamTransport, type StreamOptions, type Transport } from './transport.ts';
import { UnixgramTransport } from './unixgram.ts';
import { syslogAddress, syslogFacility } from './validate.ts';

export type SyslogFormat = '' | 'rfc3164' | 'rfc5424' | 'rfc5424micro';

/** One message as srslog formats and frames it (the line gets its newline first, as srslog's write). */
export function syslogMessage(
  rec: RemoteRecord,
  o: { facility: number; format: SyslogFormat; tag: string; host: string; pid: number; lengthFramed: boolean },
): string {
  const pri = o.facility | (rec.stream === 'stderr' ? 3 : 6);
  const content = `${rec.line.toString()}\n`;
  const ms = Number(rec.timeNano / 1_000_000n);
  let msg: string;
  if (o.format === '') msg = `<${pri}>${goTimeStamp(ms)} ${o.tag}[${o.pid}]: ${content}`;
  else if (o.format === 'rfc3164') msg = `<${pri}>${goTimeStamp(ms)} ${o.host} ${o.tag}[${o.pid}]: ${content}`;
  else {
    const micros = o.format === 'rfc5424micro' ? Number((rec.timeNano / 1000n) % 1_000_000n) : undefined;
    msg = `<${pri}>1 ${rfc3339Local(ms, micros)} ${o.host} ${o.tag} ${o.pid} ${o.tag} - ${content}`;
  }
  return o.lengthFramed ? `${Buffer.byteLength(msg)} ${msg}` : msg;
}

export function createSyslogDriver(o: RemoteFactoryOptions): RemoteLogDriver {
  const cfg = o.options;
  const addr = syslogAddress(cfg['syslog-address']);
  const format = (cfg['syslog-format'] ?? '') as SyslogFormat;
  const debug = o.onDebug ?? (() => {});
  const fmt = {
    facility: syslogFacility(cfg['syslog-facility']),
    format,
    tag: logTag(o.containerId, cfg, o.attrs),
    host: hostname(),
    pid: process.pid,
    lengthFramed: addr.proto === 'tcp+tls' && format.startsWith('rfc5424'),
  };
  let transport: Transport;
  let where: string;
  if (addr.proto === 'udp') {
    transport = new DatagramTransport(addr.host, addr.port);
    where = `udp ${addr.host}:${addr.port}`;
  } else if (addr.proto === 'unixgram') {
    where = `unixgram ${addr.path}`;
    transport = new UnixgramTransport(addr.path);
  } else if (addr.proto === '') {
    where = 'local syslog';
    transport = new LocalSyslogTransport((path, gram) =>
      gram ? new UnixgramTransport(path) : new StreamTransport({ path }, { ...streamOpts(debug), failStart: true }),
    );
  } else {
    const tlsOpts = addr.proto === 'tcp+tls' ? tlsOptions(cfg, addr.host) : undefined;
    const target = addr.proto === 'unix' ? { path: addr.path } : { host: addr.host, port: addr.port, tls: tlsOpts };
    transport = new StreamTransport(target, streamOpts(debug));
    where = addr.proto === 'unix' ? `unix ${addr.path}` : `tcp ${addr.host}:${addr.port}`; // Go names a TLS dial's network tcp too
  }
  return new RemoteLogDriver({
    name: 'syslog',
    encode: (rec) => (rec.line.length === 0 ? null : [Buffer.from(syslogMessage(rec, fmt))]),
    transport,
    options: cfg,
    cachePath: join(o.dir, 'container-cached.log'),
    onDebug: debug,
    onError: o.onError,
    startError: (err) =>
      addr.proto === '' ? 'Unix syslog delivery error' : err.message.startsWith('dial ') ? err.message : `dial ${where}: ${err.message}`,
  });
}

/** tlsconfig.Client's options: a CA to verify with, a client certificate, or no verification. */
function tlsOptions(cfg: Record<string, string>, host: string): import('node:tls').ConnectionOptions {
  const opts: import('node:tls').ConnectionOptions = isIP(host) ? {} : { servername: host };
  if (cfg['syslog-tls-ca-cert']) opts.ca = readFileSync(cfg['syslog-tls-ca-cert']);
  if (cfg['syslog-tls-cert']) opts.cert = readFileSync(cfg['syslog-tls-cert']);
  if (cfg['syslog-tls-key']) opts.key = readFileSync(cfg['syslog-tls-key']);
  if ('syslog-tls-skip-verify' in cfg) opts.rejectUnauthorized = false;
  return opts;
}

/** Stream settings: srslog dials in dockerd's New, so a receiver that is not there fails the start. */
function streamOpts(debug: (msg: string) => void): StreamOptions {
  return {
    bufferLimit: 4 << 20, // above the driver's pause mark: blocking mode holds the container before anything drops
    retryDelayMs: 100,
    maxDelayMs: 10_000,
    failStart: true,
    dialTimeoutMs: 10_000,
    onError: (err) => debug(`syslog: ${err.message}`),
  };
}

/** srslog's local syslog: the first of unixgram then unix on /dev/log, /var/run/syslog, /var/run/log that connects. */
class LocalSyslogTransport implements Transport {
  private inner?: Transport;

  constructor(private readonly make: (path: string, gram: boolean) => Transport) {}

  get queued(): number {
    return this.inner?.queued ?? 0;
  }

  get dropped(): number {
    return this.inner?.dropped ?? 0;
  }

  async connect(): Promise<void> {
    for (const gram of [true, false]) {
      for (const path of ['/dev/log', '/var/run/syslog', '/var/run/log']) {
        const t = this.make(path, gram);
        try {
          await t.connect();
          this.inner = t;
          return;
        } catch {
          await t.close(); // not this one: srslog tries the next
        }
      }
    }
    throw new Error('Unix syslog delivery error');
  }

  write(packets: Buffer[]): void {
    this.inner?.write(packets);
  }

  waitForRoom(low: number): Promise<void> {
    return this.inner ? this.inner.waitForRoom(low) : Promise.resolve();
  }

  close(): Promise<void> {
    return this.inner ? this.inner.close() : Promise.resolve();
  }
}
