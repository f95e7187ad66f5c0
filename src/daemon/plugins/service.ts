// The managed-plugin manager, backend of /plugins*: install (pull) and upgrade from a registry,
// create from a tar, enable/disable (the plugin's container in the plugins namespace), set, push,
// remove, list and inspect; and, for the plugin registry that volumes and authorization use, the
// address of every enabled plugin. Records are saved after every change, so enabled plugins run
// again after a daemon restart (or are still running, with live-restore).
import { randomBytes } from 'node:crypto';
import { mkdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict, invalidParameter, notFound } from '../../errors.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { RegistrySession } from '../../images/distribution/registry-client.ts';
import type { PluginAddress } from '../../plugins/discovery.ts';
import type { ManagedPluginLookup } from '../../plugins/registry.ts';
import type { AuthConfig, ProgressSink } from '../../types/distribution.ts';
import type { PluginConfig, PluginPrivilege, PluginView } from '../../types/plugins.ts';
import { checkFilterNames, lastBoolFilter } from '../../util/filters.ts';
import { familiarString, parseReference, referenceString, type Reference } from '../../util/image-reference.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import { applySettings, capabilitiesOf, checkPrivileges, computePrivileges, implementsOf, initialSettings } from './config.ts';
import type { PluginRunner } from './runner.ts';
import type { PluginFiles, PluginRecord } from './store.ts';
import { fetchPluginConfig, packLayer, pullPlugin, pushPlugin, unpackCreateContext } from './transfer.ts';

export interface PluginManagerDeps {
  files: PluginFiles;
  runner: PluginRunner;
  /** Registry sessions through the daemon's distribution settings (mirrors, insecure registries, proxies, certs). */
  registry: { registrySession(ref: Reference, push: boolean, auth: AuthConfig, signal?: AbortSignal): Promise<RegistrySession> };
  decodeAuth: (header: string | undefined) => AuthConfig;
  log: Pick<Logger, 'info' | 'warn' | 'debug' | 'error'>;
  events?: EventPublisher;
  /** Whether volumes (or anything else) still use the plugin: disable and remove refuse then, unless forced. */
  inUse?: (name: string) => boolean;
}

export interface InstallOptions {
  name?: string;
  upgradeOf?: string;
  privileges: unknown;
  registryAuth?: string;
  /** Told the plugin's local name before the pull starts (the route sends it as Docker-Plugin-Name). */
  onName?: (name: string) => void;
}

const view = (r: PluginRecord): PluginView => ({
  Id: r.Id,
  Name: r.Name,
  Enabled: r.Enabled,
  Settings: r.Settings,
  PluginReference: r.PluginReference,
  Config: r.Config,
});

/** A plugin's local name: the familiar reference with its tag (`vol:latest`, `localhost:5000/x:1`). */
function localName(name: string): string {
  const ref = parseReference(name);
  if (ref.digest) throw invalidParameter(`invalid plugin name ${JSON.stringify(name)}: a digest cannot name a plugin`);
  return familiarString(ref);
}

export class PluginManager implements ManagedPluginLookup {
  private records: PluginRecord[] = [];
  /** The address of each enabled plugin, by id (kept as one object while enabled: see PluginRegistry). */
  private readonly addresses = new Map<string, PluginAddress>();
  private readonly lock = new KeyedMutex();
  private closing = false;

  constructor(private readonly d: PluginManagerDeps) {}

  /** Loads the records and starts the enabled plugins again (or adopts them, still running after a live-restore). */
  async init(): Promise<void> {
    // Whatever an interrupted pull or create left in tmp/ belongs to no plugin.
    await rm(this.d.files.tmp(), { recursive: true, force: true });
    await this.d.files.init();
    this.records = await this.d.files.load();
    let changed = false;
    for (const r of this.records.filter((x) => x.Enabled)) {
      try {
        if (await this.d.runner.running(r.Id)) this.d.log.info('managed plugin still running', { plugin: r.Name });
        else await this.d.runner.start(r, 30);
        this.addresses.set(r.Id, this.address(r));
        this.watch(r);
      } catch (err) {
        // As dockerd: a plugin that does not come back is left disabled, and says why.
        this.d.log.error(`managed plugin ${r.Name} failed to start again; it is now disabled: ${(err as Error).message}`);
        r.Enabled = false;
        changed = true;
      }
    }
    if (changed) await this.d.files.save(this.records);
  }

  /** Stops the enabled plugins (left running with live-restore, like containers). */
  async shutdown(liveRestore: boolean): Promise<void> {
    this.closing = true;
    if (liveRestore) return;
    for (const r of this.records.filter((x) => x.Enabled)) await this.d.runner.stop(r.Id);
  }

  /**
   * A plugin that exits while enabled is started again, as dockerd does, after a pause that grows
   * with each consecutive failure; one that cannot be started is left disabled, with the reason logged.
   */
  private watch(r: PluginRecord, failures = 0): void {
    const startedAt = Date.now();
    void this.d.runner.waitExit(r.Id).then((status) => {
      if (status === undefined || this.closing || !r.Enabled || !this.records.includes(r)) return;
      // A plugin that ran for a while before it died starts with a short pause again.
      const n = Date.now() - startedAt > 60_000 ? 0 : failures;
      const delay = Math.min(500 * 2 ** n, 30_000);
      this.d.log.warn(`managed plugin ${r.Name} exited with status ${status}; starting it again in ${delay} ms`);
      this.addresses.delete(r.Id);
      setTimeout(() => {
        void this.lock.run('plugins', async () => {
          if (this.closing || !r.Enabled || !this.records.includes(r)) return;
          try {
            await this.d.runner.start(r, 30);
            this.addresses.set(r.Id, this.address(r));
            this.watch(r, n + 1);
          } catch (err) {
            this.d.log.error(`managed plugin ${r.Name} could not be started again; it is now disabled: ${(err as Error).message}`);
            r.Enabled = false;
            await this.save();
            this.event(r, 'disable');
          }
        });
      }, delay).unref();
    });
  }

  // ---- the plugin registry's view -----------------------------------------------------------------

  find(name: string): { address: PluginAddress; implements: string[] } | undefined {
    let r: PluginRecord | undefined;
    try {
      r = this.lookup(name);
    } catch {
      return undefined; // not a managed plugin's name (or not a reference at all): discovery decides
    }
    const address = r.Enabled ? this.addresses.get(r.Id) : undefined;
    return address ? { address, implements: implementsOf(r.Config) } : undefined;
  }

  enabledWith(iface: string): string[] {
    return this.records.filter((r) => r.Enabled && implementsOf(r.Config).includes(iface)).map((r) => r.Name);
  }

  isDisabled(name: string): boolean {
    try {
      return !this.lookup(name).Enabled;
    } catch {
      return false; // no managed plugin of that name
    }
  }

  private address(r: PluginRecord): PluginAddress {
    const rootfs = this.d.files.rootfs(r.Id);
    const propagated = r.Config.PropagatedMount;
    return {
      name: r.Name,
      socketPath: this.d.runner.socketPath(r),
      scopePath: (p) =>
        propagated && (p === propagated || p.startsWith(propagated.replace(/\/$/, '') + '/'))
          ? join(this.d.files.propagatedMount(r.Id), p.slice(propagated.length))
          : join(rootfs, p),
    };
  }

  // ---- lookups ------------------------------------------------------------------------------------

  /** By full id, unique id prefix, or name (`x` means `x:latest`). */
  private lookup(nameOrId: string): PluginRecord {
    if (!nameOrId) throw invalidParameter('plugin name cannot be empty');
    const byId = this.records.find((r) => r.Id === nameOrId);
    if (byId) return byId;
    let name: string | undefined;
    try {
      name = localName(nameOrId);
    } catch {
      name = undefined; // not a reference: only an id prefix can match
    }
    const byName = name ? this.records.find((r) => r.Name === name) : undefined;
    if (byName) return byName;
    if (/^[a-f0-9]+$/.test(nameOrId)) {
      const hits = this.records.filter((r) => r.Id.startsWith(nameOrId));
      if (hits.length === 1) return hits[0]!;
      if (hits.length > 1)
        throw invalidParameter(`multiple plugins found for ${JSON.stringify(nameOrId)}: use a longer prefix or the name`);
    }
    throw notFound(`plugin ${JSON.stringify(nameOrId)} not found`);
  }

  private async save(): Promise<void> {
    await this.d.files.save(this.records);
  }

  private event(r: PluginRecord, action: string): void {
    this.d.events?.publish({ Type: 'plugin', Action: action, Actor: { ID: r.Id, Attributes: { name: r.Name } } });
  }

  // ---- the API ------------------------------------------------------------------------------------

  async list(filters: Map<string, string[]>): Promise<PluginView[]> {
    checkFilterNames(filters, ['capability', 'enabled']);
    const enabled = lastBoolFilter('enabled', filters.get('enabled'));
    const caps = (filters.get('capability') ?? []).map((c) => c.toLowerCase());
    return this.records
      .filter((r) => enabled === undefined || r.Enabled === enabled)
      .filter((r) => !caps.length || capabilitiesOf(r.Config).some((c) => caps.includes(c)))
      .map(view);
  }

  async inspect(name: string): Promise<PluginView> {
    return view(this.lookup(name));
  }

  private remoteRef(remote: string): Reference {
    if (!remote) throw invalidParameter('remote is required: the plugin to pull, as a reference (for example localhost:5000/vol:1.0)');
    try {
      return parseReference(remote);
    } catch (err) {
      throw invalidParameter(`invalid remote reference ${JSON.stringify(remote)}: ${(err as Error).message}`);
    }
  }

  async privileges(remote: string, registryAuth?: string): Promise<PluginPrivilege[]> {
    const ref = this.remoteRef(remote);
    const session = await this.d.registry.registrySession(ref, false, this.d.decodeAuth(registryAuth));
    return computePrivileges((await fetchPluginConfig(session, ref, remote)).config);
  }

  /** POST /plugins/pull (a new plugin, named `name` or after the remote) and /plugins/{name}/upgrade. */
  async install(remote: string, opts: InstallOptions, sink: ProgressSink = () => {}, signal?: AbortSignal): Promise<string> {
    const ref = this.remoteRef(remote);
    return this.lock.run('plugins', async () => {
      const old = opts.upgradeOf !== undefined ? this.lookup(opts.upgradeOf) : undefined;
      if (old?.Enabled) throw conflict('plugin must be disabled before upgrading');
      const name = old ? old.Name : localName(opts.name || familiarString(ref));
      if (!old && this.records.some((r) => r.Name === name)) throw conflict(`plugin ${JSON.stringify(name)} already exists`);
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
        this.records = [...this.records.filter((r) => r.Id !== rec.Id), rec];
        await this.save();
        this.event(rec, 'pull');
        sink({ status: `Status: Downloaded newer image for ${familiarString(ref)}` });
        return rec.Name;
      } finally {
        await rm(pulled.rootfs, { recursive: true, force: true });
        await this.collectBlobs();
      }
    });
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

  async create(name: string, context: NodeJS.ReadableStream): Promise<void> {
    if (!name) throw invalidParameter('a name is required to create a plugin');
    const local = localName(name);
    return this.lock.run('plugins', async () => {
      if (this.records.some((r) => r.Name === local)) throw conflict(`plugin ${JSON.stringify(local)} already exists`);
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
        this.records.push(rec);
        await this.save();
        this.event(rec, 'create');
      } finally {
        await rm(tmp, { recursive: true, force: true });
      }
    });
  }

  async enable(name: string, opts: { timeout: number }): Promise<void> {
    if (opts.timeout < 0) throw invalidParameter(`invalid timeout ${opts.timeout}: must not be negative`);
    return this.lock.run('plugins', async () => {
      const r = this.lookup(name);
      if (r.Enabled) throw conflict(`plugin ${r.Name} is already enabled`);
      await this.d.runner.start(r, opts.timeout || 30);
      r.Enabled = true;
      this.addresses.set(r.Id, this.address(r));
      this.watch(r);
      await this.save();
      this.event(r, 'enable');
    });
  }

  async disable(name: string, opts: { force: boolean }): Promise<void> {
    return this.lock.run('plugins', async () => {
      const r = this.lookup(name);
      if (!r.Enabled) throw conflict(`plugin ${r.Name} is already disabled`);
      if (!opts.force && this.d.inUse?.(r.Name)) throw conflict(`plugin ${r.Name} is in use`);
      this.addresses.delete(r.Id);
      r.Enabled = false;
      await this.save();
      await this.d.runner.stop(r.Id);
      this.event(r, 'disable');
    });
  }

  async configure(name: string, settings: string[]): Promise<void> {
    return this.lock.run('plugins', async () => {
      const r = this.lookup(name);
      if (r.Enabled) throw conflict('cannot set on an active plugin, disable plugin before setting');
      r.Settings = applySettings(r.Config, r.Settings, settings);
      await this.save();
    });
  }

  async push(name: string, opts: { registryAuth?: string }, sink: ProgressSink = () => {}, signal?: AbortSignal): Promise<void> {
    const r = this.lookup(name);
    const ref = parseReference(r.Name);
    const session = await this.d.registry.registrySession(ref, true, this.d.decodeAuth(opts.registryAuth), signal);
    sink({ status: `The push refers to repository [${referenceString({ ...ref, tag: undefined })}]` });
    const pushed = await pushPlugin(session, ref, r, this.d.files, sink, signal);
    this.d.log.info('plugin pushed', { plugin: r.Name, digest: pushed.digest });
    this.event(r, 'push');
  }

  async remove(name: string, opts: { force: boolean }): Promise<PluginView> {
    return this.lock.run('plugins', async () => {
      const r = this.lookup(name);
      if (!opts.force) {
        if (this.d.inUse?.(r.Name)) throw conflict(`plugin ${r.Name} is in use`);
        if (r.Enabled) throw conflict(`plugin ${r.Name} is enabled`);
      }
      const wasEnabled = r.Enabled;
      if (r.Enabled) {
        this.addresses.delete(r.Id);
        r.Enabled = false; // first: its exit is not one to restart it after
        await this.d.runner.stop(r.Id).catch((err) => this.d.log.error(`failed to disable plugin ${r.Name}: ${(err as Error).message}`));
      }
      this.records = this.records.filter((x) => x.Id !== r.Id);
      await this.save();
      await this.d.files.removePlugin(r.Id);
      await this.collectBlobs();
      this.event(r, 'remove');
      return view({ ...r, Enabled: wasEnabled });
    });
  }

  /** Drops blobs no plugin refers to (after a remove or an upgrade). */
  private async collectBlobs(): Promise<void> {
    const keep = new Set(this.records.flatMap((r) => [r.configDigest, ...r.layers.map((l) => l.digest)]));
    await this.d.files
      .dropBlobsExcept(keep)
      .catch((err) => this.d.log.warn('plugin blob clean-up failed', { error: (err as Error).message }));
  }
}
