// Volumes: records in the store (they survive restarts); with the local driver the data lives under
// <data-root>/volumes/<name>/_data, with a volume plugin wherever the plugin keeps it (create,
// mount and remove are the plugin's). Serves the /volumes API and, for the containers service, turns a
// container's volume specs into volumes at create, into bind mounts (with copy-up) at start, and
// cleans up after exit and removal (container-hooks.ts). "In use" means referenced by any container,
// running or not (users.ts); where a volume's data is, drivers.ts.
import { mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict, invalidParameter, notFound } from '../../errors.ts';
import type { ResolvedMount } from '../../oci/mounts.ts';
import type { RecordTable } from '../../store/kv.ts';
import { isMounted } from '../../supervisor/mounts.ts';
import type { Mount } from '../../supervisor/types.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import type { MountPoint } from '../containers/record.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { ContainerVolumeHooks } from './container-hooks.ts';
import type { ContainerVolumes, VolumeContainer, VolumePlugin, VolumeRecord, VolumeUser } from './contract.ts';
import { recordView, VolumeDrivers } from './drivers.ts';
import { compileListFilters, compilePruneFilters } from './filters.ts';
import { directorySize, unmountVolume, validateDriverOpts } from './local-driver.ts';
import { ANONYMOUS_LABEL, generateVolumeName, validateVolumeName } from './names.ts';
import { VolumeUsers } from './users.ts';
import type { VolumeCreateRequest, VolumeView } from '../../types/volumes.ts';

// The record's type, for the composition root's store table.
export type { VolumeRecord } from './contract.ts';

export interface VolumeServiceDeps {
  table: RecordTable<VolumeRecord>;
  /** <data-root>/volumes */
  root: string;
  tmpDir: string;
  log: Logger;
  events?: EventPublisher;
  /** Which containers reference which volumes (daemon/containers/volume-users.ts); none if absent. */
  users?: () => VolumeUser[];
  /** Volume plugins by driver name; without it only the local driver exists. */
  plugins?: { driver(name: string): Promise<VolumePlugin> };
  /** --userns-remap: local volume directories belong to the remapped root (as dockerd's). */
  rootOwner?: { uid: number; gid: number };
}

function rfc3339Now(): string {
  return new Date().toISOString().replace(/\.\d+Z$/, 'Z');
}

export class VolumeService implements ContainerVolumes {
  private readonly lock = new KeyedMutex();
  private readonly drivers: VolumeDrivers;
  private readonly users: VolumeUsers;
  private readonly hooks: ContainerVolumeHooks;
  private pruning = false;

  constructor(private readonly d: VolumeServiceDeps) {
    this.drivers = new VolumeDrivers({
      root: d.root,
      ...(d.plugins ? { plugins: d.plugins } : {}),
      ...(d.rootOwner ? { rootOwner: d.rootOwner } : {}),
    });
    this.users = new VolumeUsers(d.users);
    this.hooks = new ContainerVolumeHooks({
      table: d.table,
      drivers: this.drivers,
      users: this.users,
      volumes: this,
      event: (action, name, attrs, driver) => this.event(action, name, attrs, driver),
      tmpDir: d.tmpDir,
      log: d.log,
    });
  }

  async init(): Promise<void> {
    await mkdir(this.d.root, { recursive: true, mode: 0o701 });
  }

  dataPath(name: string): string {
    return this.drivers.dataPath(name);
  }

  private event(
    action: string,
    name: string,
    attrs: Record<string, string> = {},
    driver = this.d.table.get(name)?.Driver ?? 'local',
  ): void {
    this.d.events?.publish({ Type: 'volume', Action: action, Actor: { ID: name, Attributes: { driver, ...attrs } } });
  }

  private get(name: string): VolumeRecord {
    const v = this.d.table.get(name);
    if (!v) throw notFound(`get ${name}: no such volume`);
    return v;
  }

  // ---- API ---------------------------------------------------------------------------------------

  async create(req: VolumeCreateRequest): Promise<VolumeView> {
    return await this.drivers.view(await this.createRecord(req));
  }

  /** A volume made (or the existing one of that name), under the volume's lock; for create and the hooks. */
  async createRecord(req: VolumeCreateRequest): Promise<VolumeRecord> {
    if (req.Name !== undefined && typeof req.Name !== 'string') throw invalidParameter('invalid volume name: must be a string');
    const name = req.Name || generateVolumeName();
    validateVolumeName(name);
    const driver = req.Driver || 'local';
    const plugin = driver === 'local' ? undefined : await this.drivers.plugin(driver);
    // The local driver's options are checked here; a plugin checks its own at Create.
    if (!plugin) validateDriverOpts(req.DriverOpts);
    for (const [k, v] of Object.entries(req.Labels ?? {}))
      if (typeof v !== 'string') throw invalidParameter(`invalid label ${JSON.stringify(k)}: value must be a string`);
    return this.lock.run(name, async () => {
      const existing = this.d.table.get(name);
      if (existing) {
        if (req.Driver && existing.Driver !== driver)
          throw conflict(`volume ${name} already exists with driver ${existing.Driver}, not ${driver}`);
        return existing;
      }
      if (plugin) await plugin.create(name, req.DriverOpts ?? null);
      else await this.drivers.makeDataDir(this.drivers.dataPath(name));
      const rec: VolumeRecord = {
        Name: name,
        Driver: driver,
        CreatedAt: rfc3339Now(),
        Labels: req.Labels ?? null,
        Options: req.DriverOpts ?? null,
      };
      this.d.table.put(name, rec);
      this.event('create', name, {}, driver);
      return rec;
    });
  }

  async inspect(name: string): Promise<VolumeView> {
    return await this.drivers.view(this.get(name));
  }

  /** Every volume (filtered); with usage, UsageData {Size, RefCount} as /system/df reports it. */
  async list(opts: { filters?: Map<string, string[]>; usage?: boolean } = {}): Promise<VolumeView[]> {
    const match = compileListFilters(opts.filters ?? new Map());
    const users = this.users.all();
    const out: VolumeView[] = [];
    for (const v of this.d.table.list()) {
      const refs = this.users.of(v.Name, users).length;
      if (!match({ ...v, refs })) continue;
      const view = await this.drivers.view(v).catch((err: unknown) => {
        // A plugin that is gone must not hide the other volumes: listed with what the record knows.
        this.d.log.warn(`volume plugin ${v.Driver}: ${(err as Error).message}`, { volume: v.Name });
        return recordView(v);
      });
      // As dockerd: sizes are known for local volumes only (-1 for a plugin's).
      if (opts.usage)
        view.UsageData = { Size: v.Driver === 'local' ? await directorySize(this.drivers.dataPath(v.Name)) : -1, RefCount: refs };
      out.push(view);
    }
    return out;
  }

  async remove(name: string, opts: { force: boolean }): Promise<void> {
    await this.lock.run(name, async () => {
      const v = this.d.table.get(name);
      if (!v) {
        if (opts.force) return;
        throw notFound(`get ${name}: no such volume`);
      }
      const users = this.users.of(name);
      if (users.length) throw conflict(`remove ${name}: volume is in use - [${users.join(', ')}]`);
      await this.destroy(v);
    });
  }

  /** A volume's data and record removed (the caller holds its lock, or it is a failed create's). */
  async destroy(v: VolumeRecord): Promise<void> {
    if (v.Driver !== 'local') {
      await (await this.drivers.plugin(v.Driver)).remove(v.Name);
      this.d.table.delete(v.Name);
      this.event('destroy', v.Name, {}, v.Driver);
      return;
    }
    const data = this.drivers.dataPath(v.Name);
    await unmountVolume(data);
    // Never delete through a mount: a bind-type volume would take its host directory with it.
    if (isMounted(data)) throw conflict(`remove ${v.Name}: the volume is still mounted at ${data}`);
    await rm(join(this.d.root, v.Name), { recursive: true, force: true });
    this.d.table.delete(v.Name);
    this.event('destroy', v.Name);
  }

  async prune(filters: Map<string, string[]>): Promise<{ VolumesDeleted: string[]; SpaceReclaimed: number }> {
    const match = compilePruneFilters(filters, ANONYMOUS_LABEL);
    if (this.pruning) throw conflict('a prune operation is already running');
    this.pruning = true;
    try {
      const deleted: string[] = []; // a list even when nothing went, as dockerd
      let reclaimed = 0;
      for (const v of this.d.table.list()) {
        // As dockerd, prune considers volumes of the local driver only: a plugin's are its own.
        if (v.Driver !== 'local') continue;
        if (!match({ ...v, refs: this.users.of(v.Name).length })) continue;
        const size = await directorySize(this.drivers.dataPath(v.Name));
        try {
          await this.lock.run(v.Name, async () => {
            if (this.users.of(v.Name).length) throw conflict('in use'); // taken meanwhile
            await this.destroy(v);
          });
        } catch (err) {
          this.d.log.warn(`failed to prune volume: ${(err as Error).message}`, { volume: v.Name });
          continue;
        }
        reclaimed += size;
        deleted.push(v.Name);
      }
      this.d.events?.publish({ Type: 'volume', Action: 'prune', Actor: { ID: '', Attributes: { reclaimed: String(reclaimed) } } });
      return { VolumesDeleted: deleted, SpaceReclaimed: reclaimed };
    } finally {
      this.pruning = false;
    }
  }

  // ---- containers (container-hooks.ts) -------------------------------------------------------------

  check(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<void> {
    return this.hooks.check(hc, config);
  }

  prepare(containerId: string, hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<MountPoint[]> {
    return this.hooks.prepare(containerId, hc, config);
  }

  attach(rec: VolumeContainer, rootMounts: Mount[]): Promise<ResolvedMount[]> {
    return this.hooks.attach(rec, rootMounts);
  }

  detach(rec: VolumeContainer): Promise<void> {
    return this.hooks.detach(rec);
  }

  release(rec: VolumeContainer, removeAnonymous: boolean): Promise<void> {
    return this.hooks.release(rec, removeAnonymous);
  }
}
