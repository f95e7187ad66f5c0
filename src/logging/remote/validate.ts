// Log-opt checks of the remote drivers, in dockerd's order and with its messages (each driver's
// ValidateLogOpt), so that `docker run --log-driver gelf --log-opt …` fails the same way.

import { statSync } from 'node:fs';
import { invalidParameter } from '../../errors.ts';

/** Remote drivers and their validators. */
export const REMOTE_VALIDATORS: Record<string, (cfg: Record<string, string>) => void> = {
  gelf: validateGelf,
  syslog: validateSyslog,
};

/** The options every driver takes that dockerd handles itself (ExtraAttributes, ParseLogTag). */
const ATTR_KEYS = new Set(['env', 'env-regex', 'labels', 'labels-regex', 'tag']);

/** Refused here: the engine never turns a user's text into a regular expression. */
function refuseRegex(kind: string, cfg: Record<string, string>): void {
  for (const key of ['labels-regex', 'env-regex']) {
    if (cfg[key]) throw invalidParameter(`log opt '${key}' is not supported by the ${kind} log driver of this engine`);
  }
}

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
  refuseRegex('gelf', cfg);
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
  refuseRegex('syslog', cfg);
}
