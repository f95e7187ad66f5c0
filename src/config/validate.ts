// Checks of the merged configuration: allowed values, ranges, addresses and cross-option rules
// (default-runtime must name a runtime). Runs after flags, file and environment are merged, at
// start-up, for --validate and on every reload. Messages follow dockerd's where it has one.

import { ConfigError } from './config-error.ts';
import type { DaemonConfig } from './daemon-config.ts';
import { parseGenericResources } from './generic-resources.ts';
import { OPTIONS } from './options.ts';
import { STOCK_RUNTIME, checkHost, isIPAddress, parseCIDR, parseKeyValue, parseSize } from './values.ts';
import { isIP } from 'node:net';

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error', 'fatal'] as const;
export const STORAGE_DRIVERS = ['overlay2', 'fuse-overlayfs', 'btrfs', 'zfs'];
export const KNOWN_FEATURES = new Set(['cdi', 'containerd-snapshotter']);

/** Integer options where 0 means "use the default" (as dockerd treats a zero in daemon.json). */
const ZERO_MEANS_DEFAULT = [
  'mtu',
  'network-control-plane-mtu',
  'max-concurrent-downloads',
  'max-concurrent-uploads',
  'max-download-attempts',
];

type Config = Record<string, unknown>;
type Rule = (value: any, config: Config) => string | undefined;

const oneOf =
  (allowed: readonly string[], message: (v: string) => string): Rule =>
  (v: string) =>
    allowed.includes(v) ? undefined : message(v);

const intRange =
  (min: number, max: number, message: (v: number) => string): Rule =>
  (v: number) =>
    v >= min && v <= max ? undefined : message(v);

const each =
  (check: (item: any) => string | undefined): Rule =>
  (list: unknown[]) => {
    for (const item of list) {
      const err = check(item);
      if (err) return err;
    }
    return undefined;
  };

const cidr =
  (family: 4 | 6, key: string): Rule =>
  (v: string) =>
    parseCIDR(v)?.family === family ? undefined : `invalid ${key}: ${v} is not an IPv${family} address with a prefix length`;

const ip =
  (family: 4 | 6 | 0, key: string): Rule =>
  (v: string) =>
    (family === 0 ? isIP(v) !== 0 : isIP(v) === family)
      ? undefined
      : `invalid ${key}: ${v} is not an IP${family ? `v${family}` : ''} address`;

const DOMAIN = /^(?:(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])\.)*(?:[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9-]*[A-Za-z0-9])$/;

const RULES: Record<string, Rule> = {
  'log-level': oneOf(LOG_LEVELS, (v) => `invalid logging level: ${v}`),
  'log-format': oneOf(['text', 'json'], (v) => `invalid log format: ${v}`),
  'default-cgroupns-mode': oneOf(['host', 'private'], (v) => `invalid default cgroup namespace (${v}): use "host" or "private"`),
  'default-ipc-mode': oneOf(['shareable', 'private'], (v) => `default IPC mode setting (${v}) is invalid; use "shareable" or "private"`),
  'storage-driver': oneOf(STORAGE_DRIVERS, (v) => `invalid storage-driver: ${v} (supported: ${STORAGE_DRIVERS.join(', ')})`),
  'exec-opts': each(checkExecOpt),
  'max-concurrent-downloads': intRange(1, Infinity, (v) => `invalid max concurrent downloads: ${v}`),
  'max-concurrent-uploads': intRange(1, Infinity, (v) => `invalid max concurrent uploads: ${v}`),
  'max-download-attempts': intRange(1, Infinity, (v) => `invalid max download attempts: ${v}`),
  mtu: intRange(68, 65535, (v) => `invalid default MTU: ${v} (must be between 68 and 65535)`),
  'network-control-plane-mtu': intRange(68, 65535, (v) => `invalid network-control-plane-mtu: ${v} (must be between 68 and 65535)`),
  // A negative timeout means "wait for the containers however long they take" (dockerd: -1).
  'shutdown-timeout': intRange(-1, Infinity, (v) => `invalid shutdown-timeout: ${v} (use -1 to wait without a limit)`),
  'cpu-rt-period': intRange(0, Infinity, (v) => `invalid cpu-rt-period: ${v}`),
  'cpu-rt-runtime': intRange(0, Infinity, (v) => `invalid cpu-rt-runtime: ${v}`),
  'default-shm-size': checkShmSize,
  labels: checkLabels,
  'node-generic-resources': (list: string[]) => errorOf(() => parseGenericResources(list)),
  // An IP address or an interface name (Linux: up to 15 characters, no '/', ':' or blank), no port.
  'cluster-default-advertise-addr': (v: string) =>
    v === '' || isIP(v) !== 0 || /^[A-Za-z0-9_.@-]{1,15}$/.test(v)
      ? undefined
      : `invalid cluster-default-advertise-addr ${JSON.stringify(v)}: an IP address or a network interface name (without a port)`,
  dns: each((a: string) => (isIPAddress(a) ? undefined : `IP address is not correctly formatted: ${a}`)),
  'dns-search': each(checkDNSSearch),
  ip: ip(0, 'ip'),
  'default-gateway': ip(4, 'default-gateway'),
  'default-gateway-v6': ip(6, 'default-gateway-v6'),
  bip: cidr(4, 'bip'),
  bip6: cidr(6, 'bip6'),
  'fixed-cidr': cidr(4, 'fixed-cidr'),
  'fixed-cidr-v6': cidr(6, 'fixed-cidr-v6'),
  'host-gateway-ips': checkHostGatewayIPs,
  hosts: each((h: string) => errorOf(() => checkHost(h))),
  'registry-mirrors': each(checkMirror),
  'insecure-registries': each((r: string) => (r.includes('://') ? `insecure registry ${r} should not contain '://'` : undefined)),
  'storage-opts': each((o: string) => errorOf(() => parseKeyValue(o)) && `invalid storage option: ${o} (expected key=value)`),
  'default-runtime': checkDefaultRuntime,
};

/** Brings values to their canonical form before validation (warning → warn, zero → default). */
export function normalizeConfig(config: Config): void {
  if (typeof config['log-level'] === 'string') {
    const level = config['log-level'].toLowerCase();
    config['log-level'] = level === 'warning' ? 'warn' : level;
  }
  for (const key of ZERO_MEANS_DEFAULT) {
    if (config[key] === 0) config[key] = OPTIONS.find((o) => o.key === key)?.default;
  }
  if (Array.isArray(config.labels)) config.labels = [...new Set(config.labels as string[])];
}

/** Throws ConfigError for the first invalid value, in table order. */
export function validateConfig(config: DaemonConfig | Config): void {
  const c = config as Config;
  for (const opt of OPTIONS) {
    const rule = RULES[opt.key];
    const value = c[opt.key];
    if (!rule || value === undefined) continue;
    const err = rule(value, c);
    if (err) throw new ConfigError(err);
  }
}

/**
 * Runtime names the supervisor resolves by itself (a shim on PATH, e.g. io.containerd.runsc.v1):
 * at least one dot, no slash, not starting with a dot.
 */
export function isShimRuntimeName(name: string): boolean {
  return name.includes('.') && !name.includes('/') && !name.startsWith('.');
}

function checkDefaultRuntime(name: string, config: Config): string | undefined {
  const runtimes = (config.runtimes ?? {}) as Record<string, unknown>;
  if (name === STOCK_RUNTIME || name in runtimes || isShimRuntimeName(name)) return undefined;
  return `specified default runtime '${name}' does not exist`;
}

function checkExecOpt(opt: string): string | undefined {
  const eq = opt.indexOf('=');
  const key = opt.slice(0, eq).trim().toLowerCase();
  const value = opt.slice(eq + 1).trim();
  if (eq < 0 || key === '' || value === '') return `invalid exec-opt (${opt}): must be formatted 'opt=value'`;
  switch (key) {
    case 'native.cgroupdriver':
      return value === 'cgroupfs' || value === 'systemd'
        ? undefined
        : `invalid exec-opt (${opt}): native.cgroupdriver option ${value} not supported (use "cgroupfs" or "systemd")`;
    case 'isolation':
      return `invalid exec-opt (${opt}): option '${key}' is only supported on windows`;
    default:
      return `invalid exec-opt (${opt}): unknown option: '${key}'`;
  }
}

function checkShmSize(text: string): string | undefined {
  const err = errorOf(() => parseSize(text));
  if (err) return `invalid default-shm-size: ${err}`;
  return parseSize(text) > 0 ? undefined : `invalid default-shm-size: ${text} (must be greater than 0)`;
}

function checkLabels(labels: string[]): string | undefined {
  const seen = new Map<string, string>();
  for (const label of labels) {
    const eq = label.indexOf('=');
    if (eq <= 0) return `bad attribute format: ${label}`;
    const key = label.slice(0, eq);
    const value = label.slice(eq + 1);
    const before = seen.get(key);
    if (before !== undefined && before !== value) return `conflict labels for ${key}=${value} and ${key}=${before}`;
    seen.set(key, value);
  }
  return undefined;
}

function checkDNSSearch(domain: string): string | undefined {
  if (domain === '.') return undefined;
  const name = domain.endsWith('.') ? domain.slice(0, -1) : domain;
  if (name.length > 255 || !DOMAIN.test(name)) return `${domain} is not a valid domain`;
  return undefined;
}

function checkHostGatewayIPs(ips: string[]): string | undefined {
  const families = new Set<number>();
  for (const a of ips) {
    const family = isIP(a);
    if (family === 0) return `invalid host-gateway-ip: ${a} is not an IP address`;
    if (families.has(family)) return `only one IPv4 and one IPv6 address may be given as host-gateway-ips (got ${ips.join(', ')})`;
    families.add(family);
  }
  return undefined;
}

function checkMirror(mirror: string): string | undefined {
  let url: URL;
  try {
    url = new URL(mirror);
  } catch {
    return `invalid mirror: "${mirror}" is not a valid URI`;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return `invalid mirror: unsupported scheme "${url.protocol.slice(0, -1)}" in "${mirror}"`;
  }
  if (url.username || url.password) return `invalid mirror: "${mirror}" must not contain credentials`;
  return undefined;
}

function errorOf(fn: () => unknown): string | undefined {
  try {
    fn();
    return undefined;
  } catch (err) {
    if (err instanceof ConfigError) return err.message;
    throw err;
  }
}
