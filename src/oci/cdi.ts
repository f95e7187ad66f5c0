// CDI (Container Device Interface): device specs in JSON or YAML under the spec directories
// (default /etc/cdi and /var/run/cdi), read again whenever a directory or file changes. A device is
// named "vendor.com/class=name"; its container edits — and the spec's own — become env variables,
// device nodes, mounts, hooks and additional groups in the OCI spec. Requests arrive as
// HostConfig.DeviceRequests with Driver "cdi" (what `--device vendor.com/class=name` sends).
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { extname, join } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { invalidParameter } from '../errors.ts';
import type { DeviceRequest } from '../types/container-api.ts';
import { resolveDevice, type ResolvedDevice } from './devices.ts';
import type { ResolvedMount } from './mounts.ts';
import type { OciSpec } from './spec-types.ts';

/** The newest CDI spec version this reader knows; older ones are accepted as they are subsets. */
export const CDI_MAX_VERSION = '1.0.0';

interface DeviceNode {
  path: string;
  hostPath?: string;
  type?: string;
  major?: number;
  minor?: number;
  fileMode?: number;
  permissions?: string;
  uid?: number;
  gid?: number;
}

interface CdiMount {
  hostPath: string;
  containerPath: string;
  type?: string;
  options?: string[];
}

export interface CdiHook {
  hookName: string;
  path: string;
  args?: string[];
  env?: string[];
  timeout?: number;
}

export interface ContainerEdits {
  env?: string[];
  deviceNodes?: DeviceNode[];
  mounts?: CdiMount[];
  hooks?: CdiHook[];
  additionalGids?: number[];
}

interface SpecFile {
  cdiVersion: string;
  kind: string;
  devices: Array<{ name: string; containerEdits?: ContainerEdits }>;
  containerEdits?: ContainerEdits;
}

/** What a container gets from its CDI devices, ready for the OCI spec builder. */
export interface CdiInjection {
  env: string[];
  devices: ResolvedDevice[];
  mounts: ResolvedMount[];
  hooks: CdiHook[];
  additionalGids: number[];
}

const KIND = /^[a-z0-9][a-z0-9.-]*\/[a-zA-Z0-9][a-zA-Z0-9_.-]*$/;
const DEVICE_NAME = /^[a-zA-Z0-9][a-zA-Z0-9_.:-]*$/;
const HOOK_NAMES = new Set(['prestart', 'createRuntime', 'createContainer', 'startContainer', 'poststart', 'poststop']);

function versionAtMost(v: string, max: string): boolean {
  const a = v.split('.').map(Number);
  const b = max.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) < (b[i] ?? 0);
  return true;
}

/** Checks one parsed spec file; throws with what is wrong. */
function checkSpec(raw: unknown): SpecFile {
  const s = raw as Partial<SpecFile> | null;
  if (!s || typeof s !== 'object') throw new Error('not a CDI spec object');
  if (typeof s.cdiVersion !== 'string' || !/^\d+\.\d+\.\d+$/.test(s.cdiVersion))
    throw new Error(`invalid cdiVersion ${JSON.stringify(s.cdiVersion)}`);
  if (!versionAtMost(s.cdiVersion, CDI_MAX_VERSION))
    throw new Error(`unsupported cdiVersion ${s.cdiVersion} (newest known: ${CDI_MAX_VERSION})`);
  if (typeof s.kind !== 'string' || !KIND.test(s.kind)) throw new Error(`invalid kind ${JSON.stringify(s.kind)}: want vendor.com/class`);
  if (!Array.isArray(s.devices) || s.devices.length === 0) throw new Error('no devices');
  for (const d of s.devices) {
    if (!d || typeof d.name !== 'string' || !DEVICE_NAME.test(d.name)) throw new Error(`invalid device name ${JSON.stringify(d?.name)}`);
    for (const h of d.containerEdits?.hooks ?? [])
      if (!HOOK_NAMES.has(h.hookName)) throw new Error(`device ${d.name}: unknown hook ${JSON.stringify(h.hookName)}`);
  }
  return s as SpecFile;
}

export class CdiRegistry {
  private signature = '';
  private devices = new Map<string, { spec: SpecFile; edits: ContainerEdits }>();
  private errors: string[] = [];

  constructor(private readonly dirs: () => string[]) {}

  /** Spec files (sorted by directory order, then name), with their modification times. */
  private scan(): Array<{ path: string; mtime: number }> {
    const files: Array<{ path: string; mtime: number }> = [];
    for (const dir of this.dirs()) {
      let names: string[];
      try {
        names = readdirSync(dir).sort();
      } catch {
        continue; // a spec directory that does not exist holds no specs (the defaults often do not)
      }
      for (const n of names) {
        if (!['.json', '.yaml', '.yml'].includes(extname(n))) continue;
        const path = join(dir, n);
        try {
          files.push({ path, mtime: statSync(path).mtimeMs });
        } catch {
          continue; // removed between readdir and stat: gone
        }
      }
    }
    return files;
  }

  /** Reads the specs again if any file was added, removed or changed since the last look. */
  refresh(): void {
    const files = this.scan();
    const sig = files.map((f) => `${f.path}@${f.mtime}`).join('|');
    if (sig === this.signature) return;
    this.signature = sig;
    const devices = new Map<string, { spec: SpecFile; edits: ContainerEdits }>();
    const errors: string[] = [];
    for (const f of files) {
      try {
        const text = readFileSync(f.path, 'utf8');
        const spec = checkSpec(extname(f.path) === '.json' ? JSON.parse(text) : parseYaml(text));
        for (const d of spec.devices) {
          const id = `${spec.kind}=${d.name}`;
          // Later directories override earlier ones (/var/run/cdi over /etc/cdi), as the CDI cache does.
          devices.set(id, { spec, edits: d.containerEdits ?? {} });
        }
      } catch (err) {
        errors.push(`CDI spec ${f.path}: ${(err as Error).message}`);
      }
    }
    this.devices = devices;
    this.errors = errors;
  }

  /** Problems found in the spec files (for /info Warnings). */
  specErrors(): string[] {
    this.refresh();
    return [...this.errors];
  }

  /** The fully qualified names of the devices the specs define. */
  deviceNames(): string[] {
    this.refresh();
    return [...this.devices.keys()].sort();
  }

  /** The edits for the requested devices (each spec's own edits once); a 400 for unknown ones. */
  resolve(ids: readonly string[]): CdiInjection {
    this.refresh();
    const unknown = ids.filter((id) => !this.devices.has(id));
    if (unknown.length) throw invalidParameter(`CDI device injection failed: unresolvable CDI devices ${unknown.join(', ')}`);
    const out: CdiInjection = { env: [], devices: [], mounts: [], hooks: [], additionalGids: [] };
    const specsSeen = new Set<SpecFile>();
    const add = (e: ContainerEdits) => {
      out.env.push(...(e.env ?? []));
      for (const n of e.deviceNodes ?? []) {
        const dev = resolveDevice(n.hostPath ?? n.path, n.path, n.permissions ?? 'rwm');
        out.devices.push({
          ...dev,
          ...(n.fileMode !== undefined ? { fileMode: n.fileMode } : {}),
          ...(n.uid !== undefined ? { uid: n.uid } : {}),
          ...(n.gid !== undefined ? { gid: n.gid } : {}),
        });
      }
      for (const m of e.mounts ?? []) {
        // CDI mounts are bind mounts in practice; a tmpfs is the only other kind the builder takes.
        const type = m.type === 'tmpfs' ? 'tmpfs' : 'bind';
        out.mounts.push({
          type,
          source: m.hostPath,
          destination: m.containerPath,
          options: m.options ?? (type === 'bind' ? ['rbind', 'rprivate'] : []),
        });
      }
      out.hooks.push(...(e.hooks ?? []));
      out.additionalGids.push(...(e.additionalGids ?? []));
    };
    for (const id of ids) {
      const d = this.devices.get(id)!;
      if (!specsSeen.has(d.spec)) {
        specsSeen.add(d.spec);
        if (d.spec.containerEdits) add(d.spec.containerEdits);
      }
      add(d.edits);
    }
    return out;
  }
}

/**
 * The CDI device names a container asks for: DeviceRequests with Driver "cdi". Other drivers are
 * refused with dockerd's words (no GPU drivers are registered here); a disabled CDI refuses too.
 */
export function cdiDeviceIds(requests: readonly DeviceRequest[] | undefined, cdiEnabled: boolean): string[] {
  const ids: string[] = [];
  for (const r of requests ?? []) {
    const driver = r.Driver ?? '';
    if (driver !== 'cdi' || !cdiEnabled) {
      const caps = JSON.stringify(r.Capabilities ?? [])
        .replace(/"/g, '')
        .replace(/,/g, ' ');
      throw invalidParameter(`could not select device driver ${JSON.stringify(driver)} with capabilities: ${caps}`);
    }
    ids.push(...(r.DeviceIDs ?? []));
  }
  return ids;
}

/** The edits that are not device nodes or mounts (those go through the spec builder's inputs). */
export function applyCdiProcessEdits(spec: OciSpec, cdi: CdiInjection): void {
  spec.process.env.push(...cdi.env);
  if (cdi.additionalGids.length) {
    const gids = new Set([...(spec.process.user.additionalGids ?? []), ...cdi.additionalGids]);
    spec.process.user.additionalGids = [...gids];
  }
  for (const h of cdi.hooks) {
    const hooks = (spec.hooks ??= {});
    (hooks[h.hookName] ??= []).push({
      path: h.path,
      ...(h.args ? { args: h.args } : {}),
      ...(h.env ? { env: h.env } : {}),
      ...(h.timeout !== undefined ? { timeout: h.timeout } : {}),
    });
  }
}
