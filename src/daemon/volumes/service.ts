// Volumes: records in the store (they survive restarts); with the local driver the data lives under
// <data-root>/volumes/<name>/_data, with a volume plugin wherever the plugin keeps it (create,
// mount and remove are the plugin's). Serves the /volumes API and, for the containers service, turns a
// container's volume specs into volumes at create, into bind mounts (with copy-up) at start, and
// cleans up after exit and removal. "In use" means referenced by any container, running or not.
import { chown, lstat, mkdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { conflict, invalidParameter, notFound } from '../../errors.ts';
import type { ResolvedMount } from '../../oci/mounts.ts';
import { scopedPath } from '../../oci/user.ts';
import type { RecordTable } from '../../store/kv.ts';
import { isMounted, readOnlyMounts, withMounted } from '../../supervisor/mounts.ts';
import type { Mount } from '../../supervisor/types.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';
import type { Logger } from '../../util/log.ts';
import { KeyedMutex } from '../../util/mutex.ts';
import type { MountPoint } from '../containers/record.ts';
import type { EventPublisher } from '../../events/bus.ts';
import { compileListFilters, compilePruneFilters } from './filters.ts';
import { copyUp, directorySize, isEmptyDir, mountVolume, needsMount, unmountVolume, validateDriverOpts } from './local-driver.ts';
import { ANONYMOUS_LABEL, generateVolumeName, validateVolumeName } from './names.ts';
import { volumeSpecs } from './specs.ts';
import type { VolumeCreateRequest, VolumeView } from '../../types/volumes.ts';

export interface VolumeRecord {
  Name: string;
  /** 'local', or the name of the volume plugin that holds it. */
  Driver: string;
  CreatedAt: string;
  Labels: Record<string, string> | null;
  /** DriverOpts as given at create (type/device/o). */
  Options: Record<string, string> | null;
}

/** A container and the volumes its record references. */
export interface VolumeUser {
  id: string;
  running: boolean;
  volumes: string[];
}

/** The container facts the hooks below read. */
export interface VolumeContainer {
  Id: string;
  HostConfig: HostConfig;
  Config: Pick<ContainerConfig, 'Volumes'>;
  Mounts: MountPoint[];
  /** inheritedMounts: destinations that came through VolumesFrom (no copy-up into those, as dockerd). */
  Internal?: { inheritedMounts?: string[] };
}

/** What the containers service and the task launcher call (all optional on their side). */
export interface ContainerVolumes {
  /** At create, before anything exists: the specs, names, drivers and options checked (400/404). */
  check(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<void>;
  /** At create: validates the specs, creates missing volumes; the volume entries of inspect's Mounts. */
  prepare(containerId: string, hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<MountPoint[]>;
  /** At start: mounts (DriverOpts), copies image content into empty volumes; the bind mounts to add. */
  attach(rec: VolumeContainer, rootMounts: Mount[]): Promise<ResolvedMount[]>;
  /** After an exit (or a failed start): undoes DriverOpts mounts nobody running needs any more. */
  detach(rec: VolumeContainer): Promise<void>;
  /** At removal (or a failed create): drops the references; removeAnonymous is `rm -v`. */
  release(rec: VolumeContainer, removeAnonymous: boolean): Promise<void>;
}

/** What a volume plugin does for this service (plugins/volume-driver.ts speaks the protocol). */
export interface VolumePlugin {
  create(name: string, opts: Record<string, string> | null): Promise<void>;
  remove(name: string): Promise<void>;
  mount(name: string, id: string): Promise<string>;
  unmount(name: string, id: string): Promise<void>;
  path(name: string): Promise<string>;
  capabilities(): Promise<'local' | 'global'>;
}

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
  /** Containers being created: their volumes count as used before the record exists. */
  private readonly pending = new Map<string, string[]>();
  private pruning = false;

  constructor(private readonly d: VolumeServiceDeps) {}

  async init(): Promise<void> {
    await mkdir(this.d.root, { recursive: true, mode: 0o701 });
  }

  dataPath(name: string): string {
    return join(this.d.root, name, '_data');
  }

  /** A local volume's _data directory (owned by the remapped root with --userns-remap), if missing. */
  private async makeDataDir(path: string): Promise<void> {
    const created = await mkdir(path, { recursive: true, mode: 0o755 });
    if (created !== undefined && this.d.rootOwner) await chown(path, this.d.rootOwner.uid, this.d.rootOwner.gid);
  }

  private allUsers(): VolumeUser[] {
    const list = this.d.users?.() ?? [];
    const known = new Set(list.map((u) => u.id));
    for (const [id, volumes] of this.pending) {
      if (known.has(id)) this.pending.delete(id);
      else list.push({ id, running: false, volumes });
    }
    return list;
  }

  private usersOf(name: string, all = this.allUsers()): string[] {
    return all.filter((u) => u.volumes.includes(name)).map((u) => u.id);
  }

  private async plugin(driver: string): Promise<VolumePlugin> {
    if (!this.d.plugins) throw notFound(`error looking up volume plugin ${driver}: plugin "${driver}" not found`);
    return this.d.plugins.driver(driver);
  }

  private async view(v: VolumeRecord): Promise<VolumeView> {
    if (v.Driver === 'local')
      return {
        CreatedAt: v.CreatedAt,
        Driver: v.Driver,
        Labels: v.Labels,
        Mountpoint: this.dataPath(v.Name),
        Name: v.Name,
        Options: v.Options,
        Scope: 'local',
      };
    const p = await this.plugin(v.Driver);
    return {
      CreatedAt: v.CreatedAt,
      Driver: v.Driver,
      Labels: v.Labels,
      Mountpoint: await p.path(v.Name),
      Name: v.Name,
      Options: v.Options,
      Scope: await p.capabilities(),
    };
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
    return await this.view(await this.createRecord(req));
  }

  private async createRecord(req: VolumeCreateRequest): Promise<VolumeRecord> {
    if (req.Name !== undefined && typeof req.Name !== 'string') throw invalidParameter('invalid volume name: must be a string');
    const name = req.Name || generateVolumeName();
    validateVolumeName(name);
    const driver = req.Driver || 'local';
    const plugin = driver === 'local' ? undefined : await this.plugin(driver);
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
      else await this.makeDataDir(this.dataPath(name));
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
    return await this.view(this.get(name));
  }

  /** Every volume (filtered); with usage, UsageData {Size, RefCount} as /system/df reports it. */
  async list(opts: { filters?: Map<string, string[]>; usage?: boolean } = {}): Promise<VolumeView[]> {
    const match = compileListFilters(opts.filters ?? new Map());
    const users = this.allUsers();
    const out: VolumeView[] = [];
    for (const v of this.d.table.list()) {
      const refs = this.usersOf(v.Name, users).length;
      if (!match({ ...v, refs })) continue;
      const view = await this.view(v).catch((err: unknown) => {
        // A plugin that is gone must not hide the other volumes: listed with what the record knows.
        this.d.log.warn(`volume plugin ${v.Driver}: ${(err as Error).message}`, { volume: v.Name });
        return {
          CreatedAt: v.CreatedAt,
          Driver: v.Driver,
          Labels: v.Labels,
          Mountpoint: '',
          Name: v.Name,
          Options: v.Options,
          Scope: 'local',
        } as VolumeView;
      });
      // As dockerd: sizes are known for local volumes only (-1 for a plugin's).
      if (opts.usage) view.UsageData = { Size: v.Driver === 'local' ? await directorySize(this.dataPath(v.Name)) : -1, RefCount: refs };
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
      const users = this.usersOf(name);
      if (users.length) throw conflict(`remove ${name}: volume is in use - [${users.join(', ')}]`);
      await this.destroy(v);
    });
  }

  private async destroy(v: VolumeRecord): Promise<void> {
    if (v.Driver !== 'local') {
      await (await this.plugin(v.Driver)).remove(v.Name);
      this.d.table.delete(v.Name);
      this.event('destroy', v.Name, {}, v.Driver);
      return;
    }
    const data = this.dataPath(v.Name);
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
        if (!match({ ...v, refs: this.usersOf(v.Name).length })) continue;
        const size = await directorySize(this.dataPath(v.Name));
        try {
          await this.lock.run(v.Name, async () => {
            if (this.usersOf(v.Name).length) throw conflict('in use'); // taken meanwhile
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

  // ---- containers ----------------------------------------------------------------------------------

  /** The volume mounts a container asks for, checked (specs, names, drivers, options); creates nothing. */
  async check(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<void> {
    for (const s of volumeSpecs(hc, config)) {
      if (s.name !== undefined) validateVolumeName(s.name);
      const driver = s.driver || hc.VolumeDriver || 'local';
      if (driver !== 'local') await this.plugin(driver);
      else validateDriverOpts(s.driverOpts);
    }
  }

  async prepare(containerId: string, hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<MountPoint[]> {
    // Everything is checked before anything is created (the create checked it already; a plugin
    // may have gone away since).
    await this.check(hc, config);
    const specs = volumeSpecs(hc, config);
    // `--volume-driver` applies to every volume that names no driver of its own.
    const driverOf = (s: { driver?: string }) => s.driver || hc.VolumeDriver || 'local';
    const names = specs.map((s) => s.name ?? generateVolumeName());
    this.pending.set(containerId, names);
    const createdAnonymous: string[] = [];
    try {
      const mounts: MountPoint[] = [];
      for (const [i, s] of specs.entries()) {
        const name = names[i]!;
        const existed = this.d.table.has(name);
        const labels = s.name !== undefined ? (s.labels ?? null) : { ...(s.labels ?? {}), [ANONYMOUS_LABEL]: '' };
        const driver = existed ? this.d.table.get(name)!.Driver : driverOf(s);
        await this.createRecord({ Name: name, Labels: labels, DriverOpts: s.driverOpts ?? null, ...(existed ? {} : { Driver: driver }) });
        if (!existed && s.name === undefined) createdAnonymous.push(name);
        // A plugin's volume has its host path only once mounted (at start).
        mounts.push({
          Type: 'volume',
          Name: name,
          Source: driver === 'local' ? this.dataPath(name) : '',
          Destination: s.destination,
          Driver: driver,
          Mode: s.mode,
          RW: !s.readOnly,
          Propagation: '',
        });
      }
      return mounts;
    } catch (err) {
      this.pending.delete(containerId);
      for (const name of createdAnonymous) {
        const v = this.d.table.get(name);
        if (v) await this.destroy(v).catch(() => undefined); // Undoing a failed create: the create's error is the one reported; a leftover anonymous volume is pruned later.
      }
      throw err;
    }
  }

  async attach(rec: VolumeContainer, rootMounts: Mount[]): Promise<ResolvedMount[]> {
    const specs = new Map(volumeSpecs(rec.HostConfig, rec.Config).map((s) => [s.destination, s]));
    const out: ResolvedMount[] = [];
    const copies: Array<{ destination: string; data: string }> = [];
    for (const m of rec.Mounts) {
      if (m.Type !== 'volume' || !m.Name) continue;
      const v = this.d.table.get(m.Name);
      if (!v) throw notFound(`error while mounting volume '${m.Destination}': get ${m.Name}: no such volume`);
      const spec = specs.get(m.Destination);
      if (v.Driver !== 'local') {
        // The mount ID is the container's: the same one unmounts it after the run.
        const path = await (await this.plugin(v.Driver)).mount(v.Name, rec.Id);
        m.Source = path;
        out.push({
          type: 'bind',
          source: spec?.subpath ? scopedPath(path, spec.subpath) : path,
          destination: m.Destination,
          options: [m.RW ? 'rw' : 'ro'],
        });
        this.event('mount', v.Name, { container: rec.Id, destination: m.Destination, propagation: '', 'read/write': String(m.RW) });
        continue;
      }
      const data = this.dataPath(v.Name);
      await this.makeDataDir(data);
      if (needsMount(v.Options)) await mountVolume(v.Options!, data);
      let source = data;
      if (spec?.subpath) {
        source = scopedPath(data, spec.subpath);
        const st = await lstat(source).catch(() => undefined); // any failure to stat the source is reported as the 400 below
        if (!st) throw invalidParameter(`cannot access path ${source}: no such file or directory`);
      } else if (spec?.copy !== false && !rec.Internal?.inheritedMounts?.includes(m.Destination) && (await isEmptyDir(data))) {
        copies.push({ destination: m.Destination, data });
      }
      out.push({ type: 'bind', source, destination: m.Destination, options: [m.RW ? 'rw' : 'ro'] });
      this.event('mount', v.Name, { container: rec.Id, destination: m.Destination, propagation: '', 'read/write': String(m.RW) });
    }
    if (copies.length) {
      await withMounted(readOnlyMounts(rootMounts), this.d.tmpDir, async (root) => {
        for (const c of copies) await copyUp(scopedPath(root, c.destination), c.data);
      });
    }
    return out;
  }

  async detach(rec: VolumeContainer): Promise<void> {
    const stillRunning = this.allUsers().filter((u) => u.running && u.id !== rec.Id);
    for (const m of rec.Mounts) {
      if (m.Type !== 'volume' || !m.Name) continue;
      const v = this.d.table.get(m.Name);
      if (!v) continue;
      this.event('unmount', v.Name, { container: rec.Id });
      if (v.Driver !== 'local') {
        await this.plugin(v.Driver)
          .then((p) => p.unmount(v.Name, rec.Id))
          .catch((err) => this.d.log.warn(`unmounting volume: ${(err as Error).message}`, { volume: v.Name }));
        continue;
      }
      if (needsMount(v.Options) && !stillRunning.some((u) => u.volumes.includes(v.Name))) {
        await unmountVolume(this.dataPath(v.Name)).catch((err) =>
          this.d.log.warn(`unmounting volume: ${(err as Error).message}`, { volume: v.Name }),
        );
      }
    }
  }

  async release(rec: VolumeContainer, removeAnonymous: boolean): Promise<void> {
    this.pending.delete(rec.Id);
    if (!removeAnonymous) return;
    let anonymous: Set<string>;
    try {
      anonymous = new Set(
        volumeSpecs(rec.HostConfig, rec.Config)
          .filter((s) => s.name === undefined)
          .map((s) => s.destination),
      );
    } catch {
      // A record whose volume specs no longer parse was refused at create; nothing anonymous to find.
      return;
    }
    for (const m of rec.Mounts) {
      if (m.Type !== 'volume' || !m.Name || !anonymous.has(m.Destination)) continue;
      // Another container may use it too (--volumes-from, or named explicitly): then it stays.
      await this.remove(m.Name, { force: true }).catch((err) => this.d.log.debug(`keeping volume ${m.Name}: ${(err as Error).message}`));
    }
  }
}
