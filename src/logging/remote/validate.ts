// Log-opt checks of the remote drivers, in dockerd's order and with its messages (each driver's
// ValidateLogOpt), so that `docker run --log-driver gelf --log-opt …` fails the same way.

import { statSync } from 'node:fs';
import { invalidParameter } from '../../errors.ts';

/** Remote drivers and their validators. */
export const REMOTE_VALIDATORS: Record<string, (cfg: Record<string, string>) => void> = {
  gelf: validateGelf,
  syslog: validateSyslog,
  fluentd: validateFluentd,
  journald: validateJournald,
};

function validateJournald(cfg: Record<string, string>): void {
  for (const key of Object.keys(cfg)) {
    if (!ATTR_KEYS.has(key)) throw invalidParameter(`unknown log opt '${key}' for journald log driver`);
  }
}

/** The options every driver takes that dockerd handles itself (ExtraAttributes, ParseLogTag). */
const ATTR_KEYS = new Set(['env', 'env-regex', 'labels', 'labels-regex', 'tag']);

/** Go's strconv.Atoi, undefined when it would fail. */
export function atoi(text: string): number | undefined {
  return /^[+-]?\d{1,18}$/.test(text) ? Number(text) : undefined;
}

/** A proto://host:port address as Go's url.Parse and net.SplitHostPort see it. */
export interface ParsedAddress {
  scheme: string;
  host: string;
  port: string;
  path: string;
}

export function parseUrl(address: string): ParsedAddress | undefined {
  const m = /^([A-Za-z][A-Za-z0-9+.-]*):\/\/([^/?#]*)([^?#]*)/.exec(address);
  if (!m) return undefined;
  const hostPort = m[2]!;
  let host = hostPort;
  let port = '';
  const v6 = /^\[([^\]]*)\](?::(\d*))?$/.exec(hostPort);
  if (v6) {
    host = v6[1]!;
    port = v6[2] ?? '';
  } else {
    const colon = hostPort.lastIndexOf(':');
    if (colon >= 0) {
      host = hostPort.slice(0, colon);
      port = hostPort.slice(colon + 1);
    }
  }
  return { scheme: m[1]!.toLowerCase(), host, port, path: m[3]! };
}

/** gelf: gelf-address required (udp:// or tcp:// with a port); compression only over UDP. */
export function gelfAddress(address: string | undefined): ParsedAddress {
  if (!address) throw invalidParameter('gelf-address is a required parameter');
  const url = parseUrl(address);
  if (!url || (url.scheme !== 'udp' && url.scheme !== 'tcp')) throw invalidParameter('gelf: endpoint needs to be TCP or UDP');
  if (!/^\d+$/.test(url.port) || url.host.includes(':') !== address.includes('[')) {
    throw invalidParameter('gelf: please provide gelf-address as proto://host:port');
  }
  return url;
}

function validateGelf(cfg: Record<string, string>): void {
  const address = gelfAddress(cfg['gelf-address']);
  for (const [key, val] of Object.entries(cfg)) {
    if (ATTR_KEYS.has(key) || key === 'gelf-address') continue;
    if (key === 'gelf-compression-level' || key === 'gelf-compression-type') {
      if (address.scheme !== 'udp') throw invalidParameter('compression is only supported on UDP');
      const level = atoi(val);
      const ok =
        key === 'gelf-compression-type' ? ['gzip', 'zlib', 'none'].includes(val) : level !== undefined && level >= -1 && level <= 9;
      if (!ok) throw invalidParameter(`unknown value ${JSON.stringify(val)} for log opt ${JSON.stringify(key)} for gelf log driver`);
    } else if (key === 'gelf-tcp-max-reconnect' || key === 'gelf-tcp-reconnect-delay') {
      if (address.scheme !== 'tcp') throw invalidParameter(`${JSON.stringify(key)} is only valid for TCP`);
      const n = atoi(val);
      if (n === undefined || n < 0) throw invalidParameter(`${JSON.stringify(key)} must be a positive integer`);
    } else {
      throw invalidParameter(`unknown log opt ${JSON.stringify(key)} for gelf log driver`);
    }
  }
}

/** Where syslog messages go; proto '' is the local default (unixgram /dev/log). */
export interface SyslogAddress {
  proto: '' | 'udp' | 'tcp' | 'tcp+tls' | 'unix' | 'unixgram';
  host: string;
  port: number;
  path: string;
}

/** dockerd's parseAddress: unix paths must exist; a network address without a port gets 514. */
export function syslogAddress(address: string | undefined): SyslogAddress {
  if (!address) return { proto: '', host: '', port: 0, path: '' };
  const url = parseUrl(address);
  const scheme = url?.scheme ?? '';
  if (url && (scheme === 'unix' || scheme === 'unixgram')) {
    try {
      statSync(url.path);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      throw invalidParameter(`stat ${url.path}: ${code === 'ENOENT' ? 'no such file or directory' : (err as Error).message}`);
    }
    return { proto: scheme, host: '', port: 0, path: url.path };
  }
  if (!url || (scheme !== 'udp' && scheme !== 'tcp' && scheme !== 'tcp+tls')) throw invalidParameter(`unsupported scheme: '${scheme}'`);
  if (url.host.includes(':') && !address.includes('['))
    throw invalidParameter(`address ${url.host}:${url.port}: too many colons in address`);
  const port = url.port === '' ? 514 : Number(url.port);
  if (!/^\d*$/.test(url.port) || port > 65535) throw invalidParameter(`invalid port in syslog-address: ${url.port}`);
  return { proto: scheme, host: url.host, port, path: '' };
}

const FACILITIES = ['kern', 'user', 'mail', 'daemon', 'auth', 'syslog', 'lpr', 'news', 'uucp', 'cron', 'authpriv', 'ftp'];

/** The facility's priority bits (daemon by default): a name, or a number 0-23. */
export function syslogFacility(name: string | undefined): number {
  if (!name) return 3 << 3;
  const i = FACILITIES.indexOf(name);
  if (i >= 0) return i << 3;
  const local = /^local([0-7])$/.exec(name);
  if (local) return (16 + Number(local[1])) << 3;
  const n = atoi(name);
  if (n !== undefined && n >= 0 && n <= 23) return n << 3;
  throw invalidParameter('invalid syslog facility');
}

const SYSLOG_KEYS = new Set([
  'syslog-address',
  'syslog-facility',
  'syslog-tls-ca-cert',
  'syslog-tls-cert',
  'syslog-tls-key',
  'syslog-tls-skip-verify',
  'syslog-format',
]);

function validateSyslog(cfg: Record<string, string>): void {
  for (const key of Object.keys(cfg)) {
    if (!ATTR_KEYS.has(key) && !SYSLOG_KEYS.has(key)) throw invalidParameter(`unknown log opt '${key}' for syslog log driver`);
  }
  syslogAddress(cfg['syslog-address']);
  syslogFacility(cfg['syslog-facility']);
  if (!['', 'rfc3164', 'rfc5424', 'rfc5424micro'].includes(cfg['syslog-format'] ?? '')) throw invalidParameter('Invalid syslog format');
}

const FLUENTD_KEYS = new Set([
  'fluentd-address',
  'fluentd-async',
  'fluentd-async-reconnect-interval',
  'fluentd-buffer-limit',
  'fluentd-max-retries',
  'fluentd-request-ack',
  'fluentd-retry-wait',
  'fluentd-sub-second-precision',
  'fluentd-write-timeout',
  'fluentd-read-timeout',
]);

function validateFluentd(cfg: Record<string, string>): void {
  for (const key of Object.keys(cfg)) {
    if (!ATTR_KEYS.has(key) && !FLUENTD_KEYS.has(key)) throw invalidParameter(`unknown log opt '${key}' for fluentd log driver`);
  }
  fluentdConfig(cfg);
}

export interface FluentdConfig {
  host: string;
  port: number;
  path: string;
  /** tls://host:port: TLS verified against the system's CAs. */
  tls: boolean;
  bufferLimit: number;
  retryWaitMs: number;
  maxRetries: number;
  async: boolean;
  subSecond: boolean;
  requestAck: boolean;
  /** fluentd-async-reconnect-interval (0: never). */
  reconnectIntervalMs: number;
  /** fluentd-write-timeout (0: none). */
  writeTimeoutMs: number;
  /** fluentd-read-timeout: the wait for an ack (0: none). */
  readTimeoutMs: number;
}

const goBool = (key: string, text: string | undefined): boolean => {
  if (!text) return false;
  if (['1', 't', 'T', 'TRUE', 'true', 'True'].includes(text)) return true;
  if (['0', 'f', 'F', 'FALSE', 'false', 'False'].includes(text)) return false;
  void key;
  throw invalidParameter(`strconv.ParseBool: parsing ${JSON.stringify(text)}: invalid syntax`);
};

/** Go's time.ParseDuration, in milliseconds; undefined when Go would refuse it. */
export function goDurationMs(text: string): number | undefined {
  const units: Record<string, number> = { ns: 1e-6, us: 1e-3, µs: 1e-3, μs: 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  if (text === '0') return 0;
  const m = /^([+-]?)((?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/.exec(text);
  if (!m) return undefined;
  let total = 0;
  for (const part of text.slice(m[1]!.length).matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h)/g))
    total += Number(part[1]) * units[part[2]!]!;
  return m[1] === '-' ? -total : total;
}

/** dockerd's parseConfig for the fluentd driver, with its messages. */
export function fluentdConfig(cfg: Record<string, string>): FluentdConfig {
  const address = cfg['fluentd-address'] ?? '';
  const where = (why: string) => invalidParameter(`invalid fluentd-address (${address}): ${why}`);
  let host = '127.0.0.1';
  let port = 24224;
  let path = '';
  let tls = false;
  if (address) {
    const url = parseUrl(address.includes('://') ? address : `tcp://${address}`);
    const scheme = url?.scheme ?? '';
    if (url && scheme === 'unix') {
      if (url.path.replace(/^\/+/, '') === '') throw where('path is empty');
      path = url.path;
    } else {
      if (!url || (scheme !== 'tcp' && scheme !== 'tls')) throw where(`unsupported scheme: '${scheme}'`);
      tls = scheme === 'tls';
      if (url.path !== '') throw where('should not contain a path element');
      if (url.host) host = url.host;
      if (url.port) {
        if (!/^\d+$/.test(url.port) || Number(url.port) > 65535)
          throw where(`invalid port: strconv.ParseUint: parsing ${JSON.stringify(url.port)}: invalid syntax`);
        port = Number(url.port);
      }
    }
  }
  let bufferLimit = 1024 * 1024;
  if (cfg['fluentd-buffer-limit']) {
    const m = /^(\d+(?:\.\d+)?) ?([kmgtp])?i?b?$/i.exec(cfg['fluentd-buffer-limit']);
    if (!m) throw invalidParameter(`invalid size: '${cfg['fluentd-buffer-limit']}'`);
    bufferLimit = Math.trunc(Number(m[1]) * 1024 ** ' kmgtp'.indexOf((m[2] ?? ' ').toLowerCase()));
  }
  let retryWaitMs = 1000;
  if (cfg['fluentd-retry-wait']) {
    const ms = goDurationMs(cfg['fluentd-retry-wait']);
    if (ms === undefined) throw invalidParameter(`time: invalid duration ${JSON.stringify(cfg['fluentd-retry-wait'])}`);
    retryWaitMs = Math.trunc(ms);
  }
  let maxRetries = 2 ** 31 - 1;
  if (cfg['fluentd-max-retries']) {
    const t = cfg['fluentd-max-retries'];
    if (!/^\d+$/.test(t) || Number(t) > 2 ** 32 - 1)
      throw invalidParameter(`strconv.ParseUint: parsing ${JSON.stringify(t)}: invalid syntax`);
    if (Number(t) > 2 ** 31 - 1) throw invalidParameter('invalid fluentd-max-retries: value out of range');
    maxRetries = Number(t);
  }
  const async = goBool('fluentd-async', cfg['fluentd-async']);
  const interval = cfg['fluentd-async-reconnect-interval'];
  let reconnectIntervalMs = 0;
  if (interval) {
    const ms = goDurationMs(interval);
    const name = 'fluentd-async-reconnect-interval';
    if (ms === undefined) throw invalidParameter(`invalid value for ${name}: time: invalid duration ${JSON.stringify(interval)}`);
    if (ms !== 0 && (ms < 100 || ms > 10_000))
      throw invalidParameter(`invalid value for ${name}: value (${JSON.stringify(interval)}) must be between 100ms and 10s`);
    reconnectIntervalMs = Math.trunc(ms);
  }
  const subSecond = goBool('fluentd-sub-second-precision', cfg['fluentd-sub-second-precision']);
  const requestAck = goBool('fluentd-request-ack', cfg['fluentd-request-ack']);
  const timeouts = ['fluentd-write-timeout', 'fluentd-read-timeout'].map((key) => {
    const t = cfg[key];
    if (!t) return 0;
    const ms = goDurationMs(t);
    if (ms === undefined)
      throw invalidParameter(`invalid value for ${key}: value must be a duration: time: invalid duration ${JSON.stringify(t)}`);
    if (ms < 0) throw invalidParameter(`invalid value for ${key}: value must be a duration that is non-negative`);
    // A sub-millisecond deadline still is one (Go's deadline in ns; timers here count ms).
    return ms > 0 ? Math.max(1, Math.ceil(ms)) : 0;
  });
  const [writeTimeoutMs, readTimeoutMs] = timeouts as [number, number];
  return {
    host,
    port,
    path,
    tls,
    bufferLimit,
    retryWaitMs,
    maxRetries,
    async,
    subSecond,
    requestAck,
    reconnectIntervalMs,
    writeTimeoutMs,
    readTimeoutMs,
  };
}
