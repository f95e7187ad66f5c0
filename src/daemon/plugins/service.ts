// The managed-plugin manager, backend of /plugins*: install (pull) and upgrade from a registry,
// create from a tar, enable/disable (the plugin's container in the plugins namespace), set, push,
// remove, list and inspect; and, for the plugin registry that volumes and authorization use, the
// address of every enabled plugin. Records are saved after every change, so enabled plugins run
// again after a daemon restart (or are still running, with live-restore). Its parts: the records
// (records.ts), the enabled plugins' processes and addresses (enabled.ts), registry and tar
// transfers (installer.ts).
import { rm } from 'node:fs/promises';
import { conflict, invalidParameter } from '../../errors.ts';
import type { EventPublisher } from '../../events/bus.ts';
import type { RegistrySession } from '../../images/distribution/registry-client.ts';
import type { PluginAddress } from '../../plugins/discovery.ts';
import type { ManagedPluginLookup } from '../../plugins/registry.ts';
import type { AuthConfig, ProgressSink } from '../../types/distribution.ts';
import type { PluginPrivilege, PluginView } from '../../types/plugins.ts';
import { checkFilterNames, lastBoolFilter } from '../../util/filters.ts';
import type { Reference } from '../../util/image-reference.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import { applySettings, capabilitiesOf, implementsOf } from './config.ts';
import { EnabledPlugins } from './enabled.ts';
import { PluginInstaller, remoteRef, type InstallOptions } from './installer.ts';
import { localName, pluginView, PluginRecords } from './records.ts';
import type { PluginRunner } from './runner.ts';
import type { PluginFiles, PluginRecord } from './store.ts';

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

export class PluginManager implements ManagedPluginLookup {
  private readonly lock = new KeyedMutex();
  private readonly records: PluginRecords;
  private readonly enabled: EnabledPlugins;
  private readonly installer: PluginInstaller;

  constructor(private readonly d: PluginManagerDeps) {
    this.records = new PluginRecords(d.files, d.log, d.events);
    this.enabled = new EnabledPlugins({ files: d.files, runner: d.runner, records: this.records, log: d.log, lock: this.lock });
    this.installer = new PluginInstaller({
      files: d.files,
      records: this.records,
      registry: d.registry,
      decodeAuth: d.decodeAuth,
      log: d.log,
    });
  }

  /** Loads the records and starts the enabled plugins again (or adopts them, still running after a live-restore). */
  async init(): Promise<void> {
    // Whatever an interrupted pull or create left in tmp/ belongs to no plugin.
    await rm(this.d.files.tmp(), { recursive: true, force: true });
    await this.d.files.init();
    await this.records.load();
    await this.enabled.restore();
  }

  /** Stops the enabled plugins (left running with live-restore, like containers). */
  async shutdown(liveRestore: boolean): Promise<void> {
    await this.enabled.shutdown(liveRestore);
  }

  // ---- the plugin registry's view -----------------------------------------------------------------

  find(name: string): { address: PluginAddress; implements: string[] } | undefined {
    let r: PluginRecord;
    try {
      r = this.records.lookup(name);
    } catch {
      return undefined; // not a managed plugin's name (or not a reference at all): discovery decides
    }
    const address = r.Enabled ? this.enabled.addressOf(r.Id) : undefined;
    return address ? { address, implements: implementsOf(r.Config) } : undefined;
  }

  enabledWith(iface: string): string[] {
    return this.records
      .all()
      .filter((r) => r.Enabled && implementsOf(r.Config).includes(iface))
      .map((r) => r.Name);
  }

  isDisabled(name: string): boolean {
    try {
      return !this.records.lookup(name).Enabled;
    } catch {
      return false; // no managed plugin of that name
    }
  }

  // ---- the API ------------------------------------------------------------------------------------

  async list(filters: Map<string, string[]>): Promise<PluginView[]> {
    checkFilterNames(filters, ['capability', 'enabled']);
    const enabled = lastBoolFilter('enabled', filters.get('enabled'));
    const caps = (filters.get('capability') ?? []).map((c) => c.toLowerCase());
    return this.records
      .all()
      .filter((r) => enabled === undefined || r.Enabled === enabled)
      .filter((r) => !caps.length || capabilitiesOf(r.Config).some((c) => caps.includes(c)))
      .map(pluginView);
  }

  async inspect(name: string): Promise<PluginView> {
    return pluginView(this.records.lookup(name));
  }

  privileges(remote: string, registryAuth?: string): Promise<PluginPrivilege[]> {
    return this.installer.privileges(remote, registryAuth);
  }

  /** POST /plugins/pull (a new plugin, named `name` or after the remote) and /plugins/{name}/upgrade. */
  async install(remote: string, opts: InstallOptions, sink: ProgressSink = () => {}, signal?: AbortSignal): Promise<string> {
    const ref = remoteRef(remote);
    return this.lock.run('plugins', () => this.installer.install(ref, remote, opts, sink, signal));
  }

  async create(name: string, context: NodeJS.ReadableStream): Promise<void> {
    if (!name) throw invalidParameter('a name is required to create a plugin');
    const local = localName(name);
    return this.lock.run('plugins', () => this.installer.create(local, context));
  }

  async enable(name: string, opts: { timeout: number }): Promise<void> {
    if (opts.timeout < 0) throw invalidParameter(`invalid timeout ${opts.timeout}: must not be negative`);
    return this.lock.run('plugins', async () => {
      const r = this.records.lookup(name);
      if (r.Enabled) throw conflict(`plugin ${r.Name} is already enabled`);
      await this.d.runner.start(r, opts.timeout || 30);
      r.Enabled = true;
      this.enabled.adopt(r);
      await this.records.save();
      this.records.event(r, 'enable');
    });
  }

  async disable(name: string, opts: { force: boolean }): Promise<void> {
    return this.lock.run('plugins', async () => {
      const r = this.records.lookup(name);
      if (!r.Enabled) throw conflict(`plugin ${r.Name} is already disabled`);
      if (!opts.force && this.d.inUse?.(r.Name)) throw conflict(`plugin ${r.Name} is in use`);
      this.enabled.withdraw(r.Id);
      r.Enabled = false;
      await this.records.save();
      await this.d.runner.stop(r.Id);
      this.records.event(r, 'disable');
    });
  }

  async configure(name: string, settings: string[]): Promise<void> {
    return this.lock.run('plugins', async () => {
      const r = this.records.lookup(name);
      if (r.Enabled) throw conflict('cannot set on an active plugin, disable plugin before setting');
      r.Settings = applySettings(r.Config, r.Settings, settings);
      await this.records.save();
    });
  }

  push(name: string, opts: { registryAuth?: string }, sink: ProgressSink = () => {}, signal?: AbortSignal): Promise<void> {
    return this.installer.push(name, opts, sink, signal);
  }

  async remove(name: string, opts: { force: boolean }): Promise<PluginView> {
    return this.lock.run('plugins', async () => {
      const r = this.records.lookup(name);
      if (!opts.force) {
        if (this.d.inUse?.(r.Name)) throw conflict(`plugin ${r.Name} is in use`);
        if (r.Enabled) throw conflict(`plugin ${r.Name} is enabled`);
      }
      const wasEnabled = r.Enabled;
      if (r.Enabled) {
        this.enabled.withdraw(r.Id);
        r.Enabled = false; // first: its exit is not one to restart it after
        await this.d.runner.stop(r.Id).catch((err) => this.d.log.error(`failed to disable plugin ${r.Name}: ${(err as Error).message}`));
      }
      this.records.delete(r.Id);
      await this.records.save();
      await this.d.files.removePlugin(r.Id);
      await this.records.collectBlobs();
      this.records.event(r, 'remove');
      return pluginView({ ...r, Enabled: wasEnabled });
    });
  }
}
