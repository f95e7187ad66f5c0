// Parsing of -H / "hosts" values into listen specifications (spec §4.1). Only syntax is checked
// here; whether an address can actually be bound is the listener's business.
import { isIP, isIPv6 } from 'node:net';
import { resolve } from 'node:path';
import { invalidParameter } from '../errors.ts';

export const DEFAULT_UNIX_SOCKET = '/var/run/engine.sock';
export const DEFAULT_HTTP_HOST = '127.0.0.1';
export const DEFAULT_HTTP_PORT = 2375;
export const DEFAULT_TLS_HTTP_PORT = 2376;

export type ListenSpec =
  | { kind: 'unix'; path: string }
  | { kind: 'tcp'; host: string; port: number; prefix: string }
  | { kind: 'fd'; name: string /* '' = all activated sockets */ };

export function defaultHosts(): string[] {
  return [`unix://${DEFAULT_UNIX_SOCKET}`];
}

/**
 * Parses one -H value. `tls` only changes the default TCP port (2376 instead of 2375).
 * An empty value means "no -H" and yields the default unix socket.
 */
export function parseHostSpec(spec: string, tls: boolean): ListenSpec {
  const value = spec.trim();
  if (value === '') return { kind: 'unix', path: DEFAULT_UNIX_SOCKET };

  const sep = value.indexOf('://');
  // Without a scheme the value is TCP shorthand: host, host:port or :port.
  const proto = sep < 0 ? 'tcp' : value.slice(0, sep);
  const rest = sep < 0 ? value : value.slice(sep + 3);
  const bad = (why: string) => invalidParameter(`invalid bind address format: ${value}: ${why}`);

  switch (proto) {
    case 'tcp':
      return parseTcp(rest, tls, bad);
    case 'unix': {
      if (rest.includes('://')) throw bad('invalid proto, expected unix');
      return { kind: 'unix', path: rest === '' ? DEFAULT_UNIX_SOCKET : resolve(rest) };
    }
    case 'fd': {
      if (rest === '' || rest === '*') return { kind: 'fd', name: '' };
      if (!/^[0-9]+$/.test(rest)) throw bad('a systemd fd address must be a number (fd://3) or empty (fd://)');
      return { kind: 'fd', name: String(Number(rest)) };
    }
    default:
      throw bad(`unsupported protocol ${JSON.stringify(proto)}; use unix://, tcp:// or fd://`);
  }
}

function parseTcp(rest: string, tls: boolean, bad: (why: string) => Error): ListenSpec {
  const defaultPort = tls ? DEFAULT_TLS_HTTP_PORT : DEFAULT_HTTP_PORT;
  if (rest.includes('://')) throw bad('invalid proto, expected tcp');
  if (/[?#@\s]/.test(rest)) throw bad('a TCP address takes no user, query, fragment or spaces');

  const slash = rest.indexOf('/');
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? '' : rest.slice(slash).replace(/\/+$/, '');

  let host: string;
  let portText: string;
  if (hostPort.startsWith('[')) {
    const close = hostPort.indexOf(']');
    if (close < 0) throw bad('missing "]" in IPv6 address');
    host = hostPort.slice(1, close);
    const after = hostPort.slice(close + 1);
    if (after !== '' && !after.startsWith(':')) throw bad('unexpected text after IPv6 address');
    portText = after.slice(1);
    if (!isIPv6(host)) throw bad(`${JSON.stringify(host)} is not an IPv6 address`);
  } else {
    const colons = hostPort.split(':').length - 1;
    if (colons > 1) throw bad('IPv6 addresses must be written in brackets, e.g. tcp://[::1]:2375');
    [host = '', portText = ''] = hostPort.split(':');
    if (host !== '' && isIP(host) === 0 && !/^[A-Za-z0-9_]([A-Za-z0-9_.-]*[A-Za-z0-9_])?$/.test(host)) {
      throw bad(`${JSON.stringify(host)} is not a valid host name or IP address`);
    }
  }

  let port = defaultPort;
  if (portText !== '') {
    if (!/^[0-9]{1,5}$/.test(portText) || Number(portText) > 65535) throw bad(`invalid port ${JSON.stringify(portText)}`);
    port = Number(portText);
  }
  return { kind: 'tcp', host: host === '' ? DEFAULT_HTTP_HOST : host, port, prefix };
}

/** The canonical URL form of a spec, e.g. tcp://[::1]:2375/prefix, unix:///path, fd://3. */
export function formatListenSpec(spec: ListenSpec): string {
  switch (spec.kind) {
    case 'unix':
      return `unix://${spec.path}`;
    case 'tcp':
      return `tcp://${isIPv6(spec.host) ? `[${spec.host}]` : spec.host}:${spec.port}${spec.prefix}`;
    case 'fd':
      return `fd://${spec.name}`;
  }
}
