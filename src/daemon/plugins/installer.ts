// Plugins in and out of a registry or a tar: the privileges a remote plugin asks for, install and
// upgrade (pull, privileges checked, rootfs moved into place), create from a tar of config.json and
// rootfs/, push. The caller holds the manager's lock around install and create.
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { conflict, invalidParameter } from '../../errors.ts';
import type { RegistrySession } from '../../images/distribution/registry-client.ts';
import type { AuthConfig, ProgressSink } from '../../types/distribution.ts';
import type { PluginConfig, PluginPrivilege } from '../../types/plugins.ts';
import { familiarString, parseReference, referenceString, type Reference } from '../../util/image-reference.ts';
import type { Logger } from '../../util/log.ts';
import { checkPrivileges, computePrivileges, initialSettings } from './config.ts';
import { localName, type PluginRecords } from './records.ts';
import type { PluginFiles, PluginRecord } from './store.ts';
import { fetchPluginConfig, packLayer, pullPlugin, pushPlugin, unpackCreateContext } from './transfer.ts';

export interface InstallOptions {
  name?: string;
  upgradeOf?: string;
  privileges: unknown;
  registryAuth?: string;
  /** Told the plugin's local name before the pull starts (the route sends it as Docker-Plugin-Name). */
  onName?: (name: string) => void;
}

export interface PluginInstallerDeps {
  files: PluginFiles;
  records: PluginRecords;
  /** Registry sessions through the daemon's distribution settings (mirrors, insecure registries, proxies, certs). */
  registry: { registrySession(ref: Reference, push: boolean, auth: AuthConfig, signal?: AbortSignal): Promise<RegistrySession> };
  decodeAuth: (header: string | undefined) => AuthConfig;
  log: Pick<Logger, 'info'>;
}

/** The remote reference of a pull or upgrade (a 400 when missing or malformed). */
export function remoteRef(remote: string): Reference {
  if (!remote) throw invalidParameter('remote is required: the plugin to pull, as a reference (for example localhost:5000/vol:1.0)');
  try {
    return parseReference(remote);
  } catch (err) {
    throw invalidParameter(`invalid remote reference ${JSON.stringify(remote)}: ${(err as Error).message}`);
  }
}

export class PluginInstaller {
  constructor(private readonly d: PluginInstallerDeps) {}

  async privileges(remote: string, registryAuth?: string): Promise<PluginPrivilege[]> {
    const ref = remoteRef(remote);
    const session = await this.d.registry.registrySession(ref, false, this.d.decodeAuth(registryAuth));
    return computePrivileges((await fetchPluginConfig(session, ref, remote)).config);
  }

  /** A new plugin (named `name` or after the remote) or an upgrade of `upgradeOf`; its local name. */
  async install(ref: Reference, remote: string, opts: InstallOptions, sink: ProgressSink, signal?: AbortSignal): Promise<string> {
    const { records } = this.d;
    const old = opts.upgradeOf !== undefined ? records.lookup(opts.upgradeOf) : undefined;
    if (old?.Enabled) throw conflict('plugin must be disabled before upgrading');
    const name = old ? old.Name : localName(opts.name || familiarString(ref));
    if (!old && records.hasName(name)) throw conflict(`plugin ${JSON.stringify(name)} already exists`);
    opts.onName?.(name);
    const session = await this.d.registry.registrySession(ref, false, this.d.decodeAuth(opts.registryAuth), signal);
    const accept = (c: PluginConfig) => checkPrivileges(computePrivileges(c), opts.privileges);
    const pulled = await pullPlugin(session, ref, remote, this.d.files, accept, sink, signal);
    try {
      const rec: PluginRecord = old
        ? {
            ...old,
            Config: pulled.config,
            configDigest: pulled.configDigest,
            layers: pulled.layers,
            PluginReference: referenceString(ref),
          }
        : {
            Id: randomBytes(32).toString('hex'),
            Name: name,
            Enabled: false,
            Settings: initialSettings(pulled.config),
            PluginReference: referenceString(ref),
            Config: pulled.config,
            configDigest: pulled.configDigest,
            layers: pulled.layers,
          };
      await this.placeRootfs(rec.Id, pulled.rootfs);
      records.put(rec);
      await records.save();
      records.event(rec, 'pull');
      sink({ status: `Status: Downloaded newer image for ${familiarString(ref)}` });
      return rec.Name;
    } finally {
      await rm(pulled.rootfs, { recursive: true, force: true });
      await records.collectBlobs();
    }
  }

  /** Moves a new rootfs into place; an upgrade keeps the old one until the new one is there. */
  private async placeRootfs(id: string, rootfs: string): Promise<void> {
    const dest = this.d.files.rootfs(id);
    const old = `${dest}-old`;
    await rm(old, { recursive: true, force: true });
    await mkdir(this.d.files.pluginDir(id), { recursive: true, mode: 0o700 });
    await rename(dest, old).catch((err: NodeJS.ErrnoException) => {
      if (err.code !== 'ENOENT') throw err;
    });
    await rename(rootfs, dest);
    await rm(old, { recursive: true, force: true });
  }

  /** A plugin made from a tar of config.json and rootfs/, named `local`. */
  async create(local: string, context: NodeJS.ReadableStream): Promise<void> {
    const { records } = this.d;
    if (records.hasName(local)) throw conflict(`plugin ${JSON.stringify(local)} already exists`);
    const { config, rootfs, tmp } = await unpackCreateContext(context, this.d.files);
    try {
      const layer = await packLayer(rootfs, this.d.files);
      const withRootfs = { ...config, rootfs: { type: 'layers', diff_ids: [layer.diffId] } };
      const configDigest = await this.d.files.putBlob(Buffer.from(JSON.stringify(withRootfs)));
      const rec: PluginRecord = {
        Id: randomBytes(32).toString('hex'),
        Name: local,
        Enabled: false,
        Settings: initialSettings(config),
        PluginReference: '',
        Config: withRootfs,
        configDigest,
        layers: [layer],
      };
      await this.placeRootfs(rec.Id, rootfs);
      records.put(rec);
      await records.save();
      records.event(rec, 'create');
    } finally {
      await rm(tmp, { recursive: true, force: true });
    }
  }

  async push(name: string, opts: { registryAuth?: string }, sink: ProgressSink, signal?: AbortSignal): Promise<void> {
    const r = this.d.records.lookup(name);
    const ref = parseReference(r.Name);
    const session = await this.d.registry.registrySession(ref, true, this.d.decodeAuth(opts.registryAuth), signal);
    sink({ status: `The push refers to repository [${referenceString({ ...ref, tag: undefined })}]` });
    const pushed = await pushPlugin(session, ref, r, this.d.files, sink, signal);
    this.d.log.info('plugin pushed', { plugin: r.Name, digest: pushed.digest });
    this.d.records.event(r, 'push');
  }
}
