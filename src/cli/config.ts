// The CLI's configuration directory (~/.engine, or --config / ENGINE_CONFIG): config.json with
// registry credentials (auths, base64 "user:password" as the docker CLI keeps them), credential
// helpers (credsStore, credHelpers: `engine-credential-<name>`, else `docker-credential-<name>`,
// speaking the docker credential-helper protocol over stdin/stdout), detachKeys, psFormat and
// imagesFormat. The file is rewritten whole with mode 0600.
import type * as ChildProcess from 'node:child_process';
import { mkdirSync, renameSync, writeFileSync } from 'node:fs';
import { readTextIfExists } from './out.ts';
import { join } from 'node:path';
import type { AuthConfig } from '../types/distribution.ts';

export interface ConfigFile {
  auths?: Record<string, { auth?: string; identitytoken?: string }>;
  credsStore?: string;
  credHelpers?: Record<string, string>;
  detachKeys?: string;
  psFormat?: string;
  imagesFormat?: string;
  [k: string]: unknown;
}

/** Loaded only when a credential helper runs (start-up cost otherwise). */
const childProcess = () => process.getBuiltinModule('node:child_process') as typeof ChildProcess;

export const DEFAULT_REGISTRY = 'https://index.docker.io/v1/';

/** The key under which a registry's credentials are kept (the hub's legacy URL for the default registry). */
export function registryKey(reference: string | undefined): string {
  if (!reference) return DEFAULT_REGISTRY;
  const first = reference.split('/')[0]!;
  if (!reference.includes('/') || (!first.includes('.') && !first.includes(':') && first !== 'localhost')) return DEFAULT_REGISTRY;
  return first === 'docker.io' || first === 'index.docker.io' ? DEFAULT_REGISTRY : first;
}

export class CliConfig {
  readonly file: string;
  data: ConfigFile;
  constructor(readonly dir: string) {
    this.file = join(dir, 'config.json');
    try {
      const text = readTextIfExists(this.file);
      this.data = text === undefined ? {} : (JSON.parse(text) as ConfigFile);
    } catch (e) {
      throw new Error(`loading config file ${this.file}: ${(e as Error).message}`);
    }
  }

  save(): void {
    mkdirSync(this.dir, { recursive: true, mode: 0o700 });
    const tmp = `${this.file}.tmp`;
    writeFileSync(tmp, `${JSON.stringify(this.data, null, '\t')}\n`, { mode: 0o600 });
    renameSync(tmp, this.file);
  }

  private helperFor(server: string): string | undefined {
    return this.data.credHelpers?.[server] ?? this.data.credsStore;
  }

  private runHelper(helper: string, action: 'get' | 'store' | 'erase', input: string): string {
    for (const bin of [`engine-credential-${helper}`, `docker-credential-${helper}`]) {
      const r = childProcess().spawnSync(bin, [action], { input, encoding: 'utf8' });
      if ((r.error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT') continue;
      if (r.status !== 0)
        throw new Error(
          `error ${action === 'get' ? 'getting' : action === 'store' ? 'storing' : 'erasing'} credentials - err: exit status ${r.status}, out: \`${(r.stdout || r.stderr).trim()}\``,
        );
      return r.stdout;
    }
    throw new Error(`credential helper engine-credential-${helper} (or docker-credential-${helper}) not found in PATH`);
  }

  /** The stored credentials of a registry, or undefined. */
  credentials(server: string): AuthConfig | undefined {
    const helper = this.helperFor(server);
    if (helper) {
      let out: string;
      try {
        out = this.runHelper(helper, 'get', server);
      } catch {
        return undefined; // "credentials not found" is an error exit of the helper: no credentials
      }
      const j = JSON.parse(out) as { Username: string; Secret: string };
      return j.Username === '<token>'
        ? { identitytoken: j.Secret, serveraddress: server }
        : { username: j.Username, password: j.Secret, serveraddress: server };
    }
    const a = this.data.auths?.[server];
    if (!a) return undefined;
    if (a.identitytoken) return { identitytoken: a.identitytoken, serveraddress: server };
    if (!a.auth) return undefined;
    const plain = Buffer.from(a.auth, 'base64').toString('utf8');
    const i = plain.indexOf(':');
    return { username: plain.slice(0, i), password: plain.slice(i + 1), serveraddress: server };
  }

  store(server: string, auth: AuthConfig): void {
    const helper = this.helperFor(server);
    if (helper) {
      this.runHelper(
        helper,
        'store',
        JSON.stringify({
          ServerURL: server,
          Username: auth.identitytoken ? '<token>' : auth.username,
          Secret: auth.identitytoken ?? auth.password,
        }),
      );
      (this.data.auths ??= {})[server] = {};
    } else
      (this.data.auths ??= {})[server] = auth.identitytoken
        ? { identitytoken: auth.identitytoken }
        : { auth: Buffer.from(`${auth.username}:${auth.password}`).toString('base64') };
    this.save();
  }

  /** Forgets a registry's credentials; false when there were none. */
  erase(server: string): boolean {
    const had = !!this.data.auths?.[server];
    const helper = this.helperFor(server);
    if (helper) this.runHelper(helper, 'erase', server);
    if (had) delete this.data.auths![server];
    this.save();
    return had || !!helper;
  }
}
