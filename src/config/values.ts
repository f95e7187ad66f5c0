// Parsers and checks for single option values: booleans and integers the way the Go flag library
// reads them, byte sizes, ulimits, runtimes, features, address pools, network options, hosts, IPs
// and CIDRs. Each throws ConfigError with a reason; callers add which flag or key it was.

import { tryGoDuration } from '../wire/go-duration.ts';
import { isIP } from 'node:net';
import { ConfigError } from './config-error.ts';
import type { AddressPool, RuntimeSpec, UlimitSpec } from './daemon-config.ts';

const TRUE = new Set(['1', 't', 'T', 'true', 'TRUE', 'True']);
const FALSE = new Set(['0', 'f', 'F', 'false', 'FALSE', 'False']);

export function parseBool(text: string): boolean {
  if (TRUE.has(text)) return true;
  if (FALSE.has(text)) return false;
  throw new ConfigError(`"${text}" is not a boolean`);
}

export function parseInteger(text: string): number {
  if (!/^[+-]?\d+$/.test(text.trim())) throw new ConfigError(`"${text}" is not an integer`);
  const n = Number(text.trim());
  if (!Number.isSafeInteger(n)) throw new ConfigError(`${text} is out of range`);
  return n;
}

const SIZE_UNITS: Record<string, number> = { '': 1, k: 1024, m: 1024 ** 2, g: 1024 ** 3, t: 1024 ** 4, p: 1024 ** 5 };

/** Bytes of a size such as 67108864, 64M, 64m, 64MB, 64MiB (binary multiples, like the Docker CLI). */
export function parseSize(text: string): number {
  const m = /^(\d+(?:\.\d+)?) ?(?:([kmgtp])(?:i?b)?|b)?$/i.exec(text.trim());
  if (!m) throw new ConfigError(`invalid size: '${text}'`);
  return Math.floor(Number(m[1]) * (SIZE_UNITS[(m[2] ?? '').toLowerCase()] ?? 1));
}

/** A builder storage limit: a size (10GB) or a percentage of the disk (10%). */
export function checkStorageSize(text: string): void {
  if (/^\d+(\.\d+)?%$/.test(text.trim())) return;
  parseSize(text);
}

/** Go time.Duration syntax (2200h, 1h30m, 10s). */
export function isGoDuration(text: string): boolean {
  return tryGoDuration(text) !== undefined;
}

export const ULIMIT_NAMES = new Set([
  'core',
  'cpu',
  'data',
  'fsize',
  'locks',
  'memlock',
  'msgqueue',
  'nice',
  'nofile',
  'nproc',
  'rss',
  'rtprio',
  'rttime',
  'sigpending',
  'stack',
]);

export function checkUlimit(u: UlimitSpec): void {
  if (!ULIMIT_NAMES.has(u.Name)) throw new ConfigError(`invalid ulimit type: ${u.Name}`);
  if (u.Soft > u.Hard) throw new ConfigError(`ulimit soft limit must be less than or equal to hard limit: ${u.Soft} > ${u.Hard}`);
}

/** name=soft[:hard], as `docker run --ulimit` takes it; hard defaults to soft. */
export function parseUlimit(text: string): UlimitSpec {
  const [name, limits] = splitOnce(text, '=');
  if (limits === undefined || name === '' || limits === '') throw new ConfigError(`invalid ulimit argument: ${text}`);
  const [softText, hardText, extra] = limits.split(':');
  if (extra !== undefined) throw new ConfigError(`too many limit value arguments - ${limits}, can only have up to two, \`soft[:hard]\``);
  const soft = parseInteger(softText ?? '');
  const hard = hardText === undefined ? soft : parseInteger(hardText);
  const u = { Name: name, Soft: soft, Hard: hard };
  checkUlimit(u);
  return u;
}

/** key=value with a non-empty key; the value may be empty and may itself contain '='. */
export function parseKeyValue(text: string): [string, string] {
  const [key, value] = splitOnce(text, '=');
  if (value === undefined || key.trim() === '') throw new ConfigError(`"${text}" is not of the form key=value`);
  return [key, value];
}

/** The built-in runtime name that --add-runtime and the `runtimes` key may not redefine. */
export const STOCK_RUNTIME = 'runc';

/** --add-runtime name=path (names are case-insensitive, stored lower-case). */
export function parseRuntimeFlag(text: string): [string, RuntimeSpec] {
  const [rawName, rawPath] = splitOnce(text, '=');
  const name = rawName.trim().toLowerCase();
  const path = rawPath?.trim() ?? '';
  if (name === '' || path === '') throw new ConfigError(`invalid runtime argument: ${text}`);
  if (name === STOCK_RUNTIME) throw new ConfigError(`runtime name '${STOCK_RUNTIME}' is reserved`);
  return [name, { path }];
}

/** --feature name[=bool]; the value defaults to true. */
export function parseFeature(text: string): [string, boolean] {
  const [name, value] = splitOnce(text, '=');
  if (name.trim() === '') throw new ConfigError(`invalid feature: ${text}`);
  return [name.trim(), value === undefined ? true : parseBool(value.trim())];
}

/** --default-address-pool base=10.10.0.0/16,size=24 */
export function parseAddressPool(text: string): AddressPool {
  let base: string | undefined;
  let size: number | undefined;
  for (const field of text.split(',')) {
    const [key, value] = splitOnce(field, '=');
    if (value === undefined) throw new ConfigError(`invalid field '${field}' must be a key=value pair`);
    switch (key.trim().toLowerCase()) {
      case 'base':
        base = value.trim();
        break;
      case 'size':
        size = parseInteger(value);
        break;
      default:
        throw new ConfigError(`invalid field key ${key}`);
    }
  }
  if (base === undefined || size === undefined) throw new ConfigError(`address pool needs both base and size: ${text}`);
  const pool = { base, size };
  checkAddressPool(pool);
  return pool;
}

export function checkAddressPool(pool: AddressPool): void {
  const cidr = parseCIDR(pool.base);
  if (!cidr) throw new ConfigError(`invalid base prefix "${pool.base}"`);
  const max = cidr.family === 4 ? 32 : 128;
  if (!Number.isInteger(pool.size) || pool.size < cidr.prefix || pool.size > max) {
    throw new ConfigError(`invalid pool size ${pool.size} for base ${pool.base}: must be between ${cidr.prefix} and ${max}`);
  }
}

/** --default-network-opt driver=option=value */
export function parseNetworkOpt(text: string): [string, string, string] {
  const [driver, rest] = splitOnce(text, '=');
  if (rest === undefined || driver.trim() === '') throw new ConfigError(`"${text}" is not of the form driver=option=value`);
  const [option, value] = splitOnce(rest, '=');
  if (value === undefined || option.trim() === '') throw new ConfigError(`"${text}" is not of the form driver=option=value`);
  return [driver.trim(), option.trim(), value];
}

export function isIPAddress(text: string): boolean {
  return isIP(text) !== 0;
}

/** An address with a prefix length (10.0.0.0/8, 172.17.0.1/16, fd00::/64). */
export function parseCIDR(text: string): { address: string; prefix: number; family: 4 | 6 } | undefined {
  const slash = text.lastIndexOf('/');
  if (slash < 0) return undefined;
  const address = text.slice(0, slash);
  const family = isIP(address);
  const prefixText = text.slice(slash + 1);
  if (family === 0 || !/^\d{1,3}$/.test(prefixText)) return undefined;
  const prefix = Number(prefixText);
  if (prefix > (family === 4 ? 32 : 128)) return undefined;
  return { address, prefix, family: family as 4 | 6 };
}

/** A -H/hosts entry: unix://path, tcp://host:port, fd://[name], or a bare host:port (tcp). */
export function checkHost(text: string): void {
  const value = text.trim();
  if (value === '') return; // the default socket
  const sep = value.indexOf('://');
  const proto = sep < 0 ? 'tcp' : value.slice(0, sep).toLowerCase();
  const addr = sep < 0 ? value : value.slice(sep + 3);
  switch (proto) {
    case 'unix':
    case 'fd':
      return;
    case 'tcp': {
      if (addr === '') return;
      let url: URL;
      try {
        // An empty host (":2375") means every interface; URL needs some host to parse the port.
        url = new URL(`tcp://${addr.startsWith(':') ? `0.0.0.0${addr}` : addr}`);
      } catch {
        throw new ConfigError(`invalid bind address format: ${text}`);
      }
      if (url.pathname !== '' && url.pathname !== '/') {
        throw new ConfigError(`invalid bind address (${text}): should not contain a path element`);
      }
      return;
    }
    default:
      throw new ConfigError(`invalid bind address format: ${text}`);
  }
}

/** Replaces user:password in a proxy URL so that error messages do not leak it. */
export function maskCredentials(raw: string): string {
  try {
    const url = new URL(raw);
    if (url.username === '' && url.password === '') return raw;
    url.username = 'xxxxx';
    url.password = 'xxxxx';
    return url.toString();
  } catch {
    // not a URL: nothing to redact
    return raw;
  }
}

/** Formats a value the way Go's %v prints it (lists as [a b], maps as map[k:v]) for messages. */
export function formatValue(value: unknown): string {
  if (value === null || value === undefined) return '<nil>';
  if (Array.isArray(value)) return `[${value.map(formatValue).join(' ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `map[${entries.map(([k, v]) => `${k}:${formatValue(v)}`).join(' ')}]`;
  }
  return String(value);
}

function splitOnce(text: string, sep: string): [string, string | undefined] {
  const i = text.indexOf(sep);
  return i < 0 ? [text, undefined] : [text.slice(0, i), text.slice(i + sep.length)];
}
