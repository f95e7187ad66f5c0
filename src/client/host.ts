// Where the client connects and how: the daemon address (unix://, tcp://, ssh://, or TCP shorthand)
// and the TLS settings, from explicit options or the environment, as the docker CLI reads DOCKER_*:
// ENGINE_HOST, ENGINE_TLS_VERIFY (any non-empty value: TLS, and verify the daemon's certificate),
// ENGINE_CERT_PATH (ca.pem, cert.pem, key.pem; default ~/.engine), ENGINE_API_VERSION.
import { existsSync, readFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';

export const DEFAULT_SOCKET = '/var/run/engine.sock';

export type HostTarget =
  | { kind: 'unix'; path: string }
  | { kind: 'tcp'; host: string; port: number; prefix: string }
  | { kind: 'ssh'; user?: string; host: string; port?: number; socketPath?: string };

export interface TlsSettings {
  /** Verify the daemon's certificate against ca (or the system roots when ca is absent). */
  verify: boolean;
  ca?: Buffer;
  cert?: Buffer;
  key?: Buffer;
  /** Server name to check when connecting by address. */
  servername?: string;
}

export interface ConnectionSettings {
  target: HostTarget;
  tls?: TlsSettings;
}

/** Parses a client host: unix:///path, tcp://host:port[/prefix], ssh://[user@]host[:port][/socket], host[:port]. */
export function parseHost(spec: string | undefined, tls = false): HostTarget {
  const value = (spec ?? '').trim();
  if (value === '') return { kind: 'unix', path: DEFAULT_SOCKET };
  const sep = value.indexOf('://');
  const scheme = sep < 0 ? 'tcp' : value.slice(0, sep).toLowerCase();
  const rest = sep < 0 ? value : value.slice(sep + 3);
  if (scheme === 'unix') {
    if (!rest) throw new Error(`invalid host "${value}": empty socket path`);
    return { kind: 'unix', path: rest };
  }
  if (scheme === 'ssh') {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      throw new Error(`invalid ssh host "${value}"`);
    }
    if (!url.hostname) throw new Error(`invalid ssh host "${value}": no host`);
    if (url.password) throw new Error(`invalid ssh host "${value}": plain-text password is not supported`);
    const path = decodeURIComponent(url.pathname);
    return {
      kind: 'ssh',
      host: url.hostname.replace(/^\[|\]$/g, ''),
      ...(url.username ? { user: decodeURIComponent(url.username) } : {}),
      ...(url.port ? { port: Number(url.port) } : {}),
      ...(path && path !== '/' ? { socketPath: path } : {}),
    };
  }
  if (scheme !== 'tcp' && scheme !== 'http' && scheme !== 'https') throw new Error(`invalid host "${value}": unsupported scheme ${scheme}`);
  const slash = rest.indexOf('/');
  const hostPort = slash < 0 ? rest : rest.slice(0, slash);
  const prefix = slash < 0 ? '' : rest.slice(slash).replace(/\/+$/, '');
  let host = hostPort;
  let port = '';
  const m = hostPort.match(/^\[([^\]]+)\](?::(\d*))?$/) ?? hostPort.match(/^([^:]*)(?::(\d*))?$/);
  if (!m) throw new Error(`invalid host "${value}"`);
  host = m[1] || '127.0.0.1';
  port = m[2] ?? '';
  const n = port === '' ? (tls || scheme === 'https' ? 2376 : 2375) : Number(port);
  if (!Number.isInteger(n) || n <= 0 || n > 65535) throw new Error(`invalid host "${value}": bad port`);
  return { kind: 'tcp', host, port: n, prefix };
}

export interface SettingsInput {
  host?: string;
  /** --tls: TLS without verifying the daemon. */
  tls?: boolean;
  /** --tlsverify: TLS, verifying the daemon. */
  tlsVerify?: boolean;
  certPath?: string;
  tlsCaCert?: string;
  tlsCert?: string;
  tlsKey?: string;
}

export function defaultConfigDir(env: NodeJS.ProcessEnv = process.env): string {
  return env.ENGINE_CONFIG || join(env.HOME || homedir(), '.engine');
}

/** Builds connection settings from explicit input, falling back to ENGINE_* variables. */
export function settingsFromEnv(input: SettingsInput = {}, env: NodeJS.ProcessEnv = process.env): ConnectionSettings {
  const verify = input.tlsVerify ?? !!env.ENGINE_TLS_VERIFY;
  const useTls = verify || !!input.tls;
  const target = parseHost(input.host ?? env.ENGINE_HOST, useTls);
  if (!useTls || target.kind !== 'tcp') return { target };
  const certDir = input.certPath ?? (env.ENGINE_CERT_PATH || defaultConfigDir(env));
  const read = (explicit: string | undefined, name: string): Buffer | undefined => {
    const p = explicit ?? join(certDir, name);
    if (existsSync(p)) return readFileSync(p);
    if (explicit) throw new Error(`could not read ${p}`);
    return undefined;
  };
  const tls: TlsSettings = {
    verify,
    ca: read(input.tlsCaCert, 'ca.pem'),
    cert: read(input.tlsCert, 'cert.pem'),
    key: read(input.tlsKey, 'key.pem'),
  };
  if (!!tls.cert !== !!tls.key) throw new Error(`TLS client certificate and key must both be given (looked in ${certDir})`);
  return { target, tls };
}
