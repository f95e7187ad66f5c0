// Where plugins are found, as dockerd finds its "legacy" plugins: a unix socket named after the
// plugin in the sockets directory (`<name>.sock` or `<name>/<name>.sock`), or a spec file in a specs
// directory (`<name>.spec` holding a URL, `<name>.json` holding Name/Addr/TLSConfig). A plugin may
// also be named by the absolute path of its socket or spec file.
import { readFile, stat } from 'node:fs/promises';
import { basename, extname, isAbsolute, join } from 'node:path';
import { invalidParameter, notFound } from '../errors.ts';

export interface PluginDirs {
  sockets: string[];
  specs: string[];
}

export const DEFAULT_PLUGIN_DIRS: PluginDirs = {
  sockets: ['/run/engine/plugins'],
  specs: ['/etc/engine/plugins', '/usr/lib/engine/plugins'],
};

export interface PluginTls {
  caFile?: string;
  certFile?: string;
  keyFile?: string;
  insecureSkipVerify?: boolean;
}

/** How to reach a plugin: a unix socket path, or a TCP/TLS base URL. */
export interface PluginAddress {
  name: string;
  socketPath?: string;
  url?: string;
  tls?: PluginTls;
  /** A managed plugin's paths are in its rootfs: this maps one to the host (dockerd's ScopedPath). */
  scopePath?: (path: string) => string;
}

const NAME = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

async function isSocket(path: string): Promise<boolean> {
  // Absent or unreadable: not this candidate, the next one is tried.
  return stat(path).then(
    (s) => s.isSocket(),
    () => false,
  );
}

async function readText(path: string): Promise<string | undefined> {
  return readFile(path, 'utf8').catch(() => undefined); // Absent: not this candidate; other read errors are reported by the caller's "not found".
}

function fromUrl(name: string, text: string, where: string): PluginAddress {
  const raw = text.trim();
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    throw invalidParameter(`plugin ${name}: ${where} holds no valid address: ${JSON.stringify(raw)}`);
  }
  if (u.protocol === 'unix:') return { name, socketPath: u.pathname };
  if (u.protocol === 'tcp:' || u.protocol === 'http:') return { name, url: `http://${u.host}` };
  if (u.protocol === 'https:') return { name, url: `https://${u.host}` };
  throw invalidParameter(`plugin ${name}: unsupported address scheme ${u.protocol} in ${where}`);
}

async function fromJsonSpec(name: string, path: string, text: string): Promise<PluginAddress> {
  let spec: {
    Name?: unknown;
    Addr?: unknown;
    TLSConfig?: { InsecureSkipVerify?: unknown; CAFile?: unknown; CertFile?: unknown; KeyFile?: unknown };
  };
  try {
    spec = JSON.parse(text) as typeof spec;
  } catch (err) {
    throw invalidParameter(`plugin ${name}: ${path} is not valid JSON: ${(err as Error).message}`);
  }
  if (typeof spec.Addr !== 'string') throw invalidParameter(`plugin ${name}: ${path} has no Addr`);
  const addr = fromUrl(typeof spec.Name === 'string' && spec.Name ? spec.Name : name, spec.Addr, path);
  const t = spec.TLSConfig;
  if (t && addr.url) {
    addr.url = addr.url.replace(/^http:/, 'https:');
    addr.tls = {
      ...(typeof t.CAFile === 'string' ? { caFile: t.CAFile } : {}),
      ...(typeof t.CertFile === 'string' ? { certFile: t.CertFile } : {}),
      ...(typeof t.KeyFile === 'string' ? { keyFile: t.KeyFile } : {}),
      ...(t.InsecureSkipVerify === true ? { insecureSkipVerify: true } : {}),
    };
  }
  return addr;
}

/** Finds a plugin by name (or by the absolute path of its socket or spec file). */
export async function locatePlugin(nameOrPath: string, dirs: PluginDirs = DEFAULT_PLUGIN_DIRS): Promise<PluginAddress> {
  if (isAbsolute(nameOrPath)) {
    const ext = extname(nameOrPath);
    const name = basename(nameOrPath, ext);
    if (ext === '.sock' || (await isSocket(nameOrPath))) return { name, socketPath: nameOrPath };
    const text = await readText(nameOrPath);
    if (text === undefined) throw notFound(`plugin ${nameOrPath} not found`);
    return ext === '.json' ? fromJsonSpec(name, nameOrPath, text) : fromUrl(name, text, nameOrPath);
  }
  if (!NAME.test(nameOrPath)) throw invalidParameter(`invalid plugin name ${JSON.stringify(nameOrPath)}`);
  const name = nameOrPath;
  for (const dir of dirs.sockets) {
    for (const p of [join(dir, `${name}.sock`), join(dir, name, `${name}.sock`)]) {
      if (await isSocket(p)) return { name, socketPath: p };
    }
  }
  for (const dir of dirs.specs) {
    for (const [p, json] of [
      [join(dir, `${name}.spec`), false],
      [join(dir, `${name}.json`), true],
      [join(dir, name, `${name}.spec`), false],
      [join(dir, name, `${name}.json`), true],
    ] as const) {
      const text = await readText(p);
      if (text !== undefined) return json ? fromJsonSpec(name, p, text) : fromUrl(name, text, p);
    }
  }
  throw notFound(`plugin ${JSON.stringify(name)} not found`);
}
