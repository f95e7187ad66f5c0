// Which URLs to try for a registry and how to trust them: registry-mirrors for docker.io (in
// order, then the official registry), insecure-registries by host:port or by CIDR (127.0.0.0/8
// and ::1 always), HTTPS first and plain HTTP only for insecure registries, and the certs.d
// directory (<dir>/<host:port>/*.crt CAs, *.cert/*.key client pairs). The directory is
// /etc/engine/certs.d unless ENGINE_CERTS_D names another (tests use that).
import { lookup } from 'node:dns/promises';
import { readdir, readFile } from 'node:fs/promises';
import { BlockList, isIP } from 'node:net';
import { join } from 'node:path';
import { rootCertificates } from 'node:tls';
import { invalidParameter } from '../../errors.ts';
import { DEFAULT_DOMAIN } from '../../util/image-reference.ts';

export const OFFICIAL_REGISTRY_HOST = 'registry-1.docker.io';
export const OFFICIAL_INDEX_HOST = 'index.docker.io';
export const DEFAULT_CERTS_DIR = '/etc/engine/certs.d';
const ALWAYS_INSECURE = ['127.0.0.0/8', '::1/128'];

export function certsDir(): string {
  return process.env.ENGINE_CERTS_D || DEFAULT_CERTS_DIR;
}

export interface TlsSettings {
  /** Verify the server certificate (false for insecure registries). */
  verify: boolean;
  /** Trusted CAs: the system roots plus the certs.d ones; absent = Node's defaults. */
  ca?: string[];
  cert?: Buffer;
  key?: Buffer;
}

export interface Endpoint {
  /** Base URL, e.g. https://192.0.2.2:5000 (no trailing slash). */
  url: string;
  /** The registry's name as written in references (docker.io, localhost:5000). */
  registry: string;
  mirror: boolean;
  /** Marked insecure: TLS unverified, plain HTTP allowed. */
  insecure: boolean;
  tls: TlsSettings;
}

export interface RegistrySettings {
  mirrors: string[];
  insecureRegistries: string[];
}

/** host[:port] → host without brackets or port. */
export function hostnameOf(hostport: string): string {
  if (hostport.startsWith('[')) return hostport.slice(1, hostport.indexOf(']'));
  const colon = hostport.lastIndexOf(':');
  return colon > 0 && hostport.indexOf(':') === colon ? hostport.slice(0, colon) : hostport;
}

/** Reads certs.d/<host>: CAs (*.crt) and client key pairs (*.cert + *.key), as dockerd does. */
export async function readCertsDir(dir: string, host: string): Promise<{ ca: string[]; cert?: Buffer; key?: Buffer }> {
  const hostDir = join(dir, host.replace(/\//g, '_'));
  let names: string[];
  try {
    names = (await readdir(hostDir)).sort();
  } catch {
    return { ca: [] };
  }
  const ca: string[] = [];
  let cert: Buffer | undefined;
  let key: Buffer | undefined;
  for (const n of names) {
    if (n.endsWith('.crt')) ca.push(await readFile(join(hostDir, n), 'utf8'));
    else if (n.endsWith('.cert')) {
      const keyName = n.slice(0, -'.cert'.length) + '.key';
      if (!names.includes(keyName))
        throw invalidParameter(`missing key ${keyName} for client certificate ${n}. CA certificates must use the extension .crt`);
      cert ??= await readFile(join(hostDir, n));
      key ??= await readFile(join(hostDir, keyName));
    } else if (n.endsWith('.key')) {
      const certName = n.slice(0, -'.key'.length) + '.cert';
      if (!names.includes(certName)) throw invalidParameter(`missing client certificate ${certName} for key ${n}`);
    }
  }
  return { ca, ...(cert ? { cert, key } : {}) };
}

export class RegistryHosts {
  constructor(
    private readonly settings: () => RegistrySettings,
    private readonly dir: () => string = certsDir,
  ) {}

  private insecureRanges(): { names: Set<string>; ranges: BlockList } {
    const names = new Set<string>();
    const ranges = new BlockList();
    for (const cidr of [...ALWAYS_INSECURE, ...this.settings().insecureRegistries]) {
      const entry = cidr.replace(/^https?:\/\//, '').replace(/\/+$/, '');
      const slash = entry.indexOf('/');
      if (slash > 0 && isIP(entry.slice(0, slash))) {
        const ip = entry.slice(0, slash);
        const family = isIP(ip) === 6 ? 'ipv6' : 'ipv4';
        ranges.addSubnet(ip, Number(entry.slice(slash + 1)), family);
      } else names.add(entry.toLowerCase());
    }
    return { names, ranges };
  }

  /** Whether the registry is marked insecure (by name, or by an address in an insecure range). */
  async isInsecure(registry: string): Promise<boolean> {
    if (registry === DEFAULT_DOMAIN) return false;
    const { names, ranges } = this.insecureRanges();
    if (names.has(registry.toLowerCase())) return true;
    const host = hostnameOf(registry);
    let addresses: { address: string; family: number }[];
    if (isIP(host)) addresses = [{ address: host, family: isIP(host) }];
    else {
      try {
        addresses = await lookup(host, { all: true });
      } catch {
        return false; // unresolvable: treated as secure; the connection attempt reports the lookup error
      }
    }
    return addresses.some((a) => ranges.check(a.address, a.family === 6 ? 'ipv6' : 'ipv4'));
  }

  private async tlsFor(host: string, insecure: boolean): Promise<TlsSettings> {
    const extra = await readCertsDir(this.dir(), host);
    return {
      verify: !insecure,
      ...(extra.ca.length ? { ca: [...rootCertificates, ...extra.ca] } : {}),
      ...(extra.cert ? { cert: extra.cert, key: extra.key! } : {}),
    };
  }

  /**
   * Endpoints to try, in order. Mirrors only for pulls from docker.io; an insecure registry gets
   * HTTPS without verification first, then plain HTTP.
   */
  async endpoints(registry: string, opts: { mirrors?: boolean } = {}): Promise<Endpoint[]> {
    const out: Endpoint[] = [];
    if (registry === DEFAULT_DOMAIN) {
      if (opts.mirrors) {
        for (const m of this.settings().mirrors) {
          const u = new URL(m);
          const insecure = await this.isInsecure(u.host);
          out.push({
            url: `${u.protocol}//${u.host}${u.pathname.replace(/\/+$/, '')}`,
            registry,
            mirror: true,
            insecure,
            tls: await this.tlsFor(u.host, insecure),
          });
        }
      }
      out.push({
        url: `https://${OFFICIAL_REGISTRY_HOST}`,
        registry,
        mirror: false,
        insecure: false,
        tls: await this.tlsFor(OFFICIAL_REGISTRY_HOST, false),
      });
      return out;
    }
    const insecure = await this.isInsecure(registry);
    const tls = await this.tlsFor(registry, insecure);
    out.push({ url: `https://${registry}`, registry, mirror: false, insecure, tls });
    if (insecure) out.push({ url: `http://${registry}`, registry, mirror: false, insecure, tls });
    return out;
  }
}
