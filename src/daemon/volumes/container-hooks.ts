// The volume side of a container's life: its volume specs checked and its volumes created at
// create, mounted (DriverOpts, a plugin's Mount) and filled from the image (copy-up) at start,
// unmounted after the run, its anonymous volumes removed with `rm -v`.
import { lstat } from 'node:fs/promises';
import { invalidParameter, notFound } from '../../errors.ts';
import type { ResolvedMount } from '../../oci/mounts.ts';
import { scopedPath } from '../../oci/user.ts';
import type { RecordTable } from '../../store/kv.ts';
import { readOnlyMounts, withMounted } from '../../supervisor/mounts.ts';
import type { Mount } from '../../supervisor/types.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';
import type { VolumeCreateRequest } from '../../types/volumes.ts';
import type { Logger } from '../../util/log.ts';
import type { MountPoint } from '../containers/record.ts';
import type { ContainerVolumes, VolumeContainer, VolumeEvent, VolumeRecord } from './contract.ts';
import type { VolumeDrivers } from './drivers.ts';
import { copyUp, isEmptyDir, mountVolume, needsMount, unmountVolume, validateDriverOpts } from './local-driver.ts';
import { ANONYMOUS_LABEL, generateVolumeName, validateVolumeName } from './names.ts';
import { volumeSpecs } from './specs.ts';
import type { VolumeUsers } from './users.ts';

/** What the hooks need of the volume service itself: volumes made and removed under its lock. */
export interface VolumeLifecycle {
  createRecord(req: VolumeCreateRequest): Promise<VolumeRecord>;
  destroy(v: VolumeRecord): Promise<void>;
  remove(name: string, opts: { force: boolean }): Promise<void>;
}

export interface ContainerVolumeDeps {
  table: RecordTable<VolumeRecord>;
  drivers: VolumeDrivers;
  users: VolumeUsers;
  volumes: VolumeLifecycle;
  event: VolumeEvent;
  tmpDir: string;
  log: Logger;
}

export class ContainerVolumeHooks implements ContainerVolumes {
  constructor(private readonly d: ContainerVolumeDeps) {}

  /** The volume mounts a container asks for, checked (specs, names, drivers, options); creates nothing. */
  async check(hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<void> {
    for (const s of volumeSpecs(hc, config)) {
      if (s.name !== undefined) validateVolumeName(s.name);
      const driver = s.driver || hc.VolumeDriver || 'local';
      if (driver !== 'local') await this.d.drivers.plugin(driver);
      else validateDriverOpts(s.driverOpts);
    }
  }

  async prepare(containerId: string, hc: HostConfig, config: Pick<ContainerConfig, 'Volumes'>): Promise<MountPoint[]> {
    const { table, drivers } = this.d;
    // Everything is checked before anything is created (the create checked it already; a plugin
    // may have gone away since).
    await this.check(hc, config);
    const specs = volumeSpecs(hc, config);
    // `--volume-driver` applies to every volume that names no driver of its own.
    const driverOf = (s: { driver?: string }) => s.driver || hc.VolumeDriver || 'local';
    const names = specs.map((s) => s.name ?? generateVolumeName());
    this.d.users.reserve(containerId, names);
    const createdAnonymous: string[] = [];
    try {
      const mounts: MountPoint[] = [];
      for (const [i, s] of specs.entries()) {
        const name = names[i]!;
        const existed = table.has(name);
        const labels = s.name !== undefined ? (s.labels ?? null) : { ...(s.labels ?? {}), [ANONYMOUS_LABEL]: '' };
        const driver = existed ? table.get(name)!.Driver : driverOf(s);
        await this.d.volumes.createRecord({
          Name: name,
          Labels: labels,
          DriverOpts: s.driverOpts ?? null,
          ...(existed ? {} : { Driver: driver }),
        });
        if (!existed && s.name === undefined) createdAnonymous.push(name);
        // A plugin's volume has its host path only once mounted (at start).
        mounts.push({
          Type: 'volume',
          Name: name,
          Source: driver === 'local' ? drivers.dataPath(name) : '',
          Destination: s.destination,
          Driver: driver,
          Mode: s.mode,
          RW: !s.readOnly,
          Propagation: '',
        });
      }
      return mounts;
    } catch (err) {
      this.d.users.drop(containerId);
      for (const name of createdAnonymous) {
        const v = table.get(name);
        if (v) await this.d.volumes.destroy(v).catch(() => undefined); // Undoing a failed create: the create's error is the one reported; a leftover anonymous volume is pruned later.
      }
      throw err;
    }
  }

  async attach(rec: VolumeContainer, rootMounts: Mount[]): Promise<ResolvedMount[]> {
    const { drivers } = this.d;
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
        const path = await (await drivers.plugin(v.Driver)).mount(v.Name, rec.Id);
        m.Source = path;
        out.push({
          type: 'bind',
          source: spec?.subpath ? scopedPath(path, spec.subpath) : path,
          destination: m.Destination,
          options: [m.RW ? 'rw' : 'ro'],
        });
        this.d.event('mount', v.Name, { container: rec.Id, destination: m.Destination, propagation: '', 'read/write': String(m.RW) });
        continue;
      }
      const data = drivers.dataPath(v.Name);
      await drivers.makeDataDir(data);
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
      this.d.event('mount', v.Name, { container: rec.Id, destination: m.Destination, propagation: '', 'read/write': String(m.RW) });
    }
    if (copies.length) {
      await withMounted(readOnlyMounts(rootMounts), this.d.tmpDir, async (root) => {
        for (const c of copies) await copyUp(scopedPath(root, c.destination), c.data);
      });
    }
    return out;
  }

  async detach(rec: VolumeContainer): Promise<void> {
    const stillRunning = this.d.users.all().filter((u) => u.running && u.id !== rec.Id);
    for (const m of rec.Mounts) {
      if (m.Type !== 'volume' || !m.Name) continue;
      const v = this.d.table.get(m.Name);
      if (!v) continue;
      this.d.event('unmount', v.Name, { container: rec.Id });
      if (v.Driver !== 'local') {
        await this.d.drivers
          .plugin(v.Driver)
          .then((p) => p.unmount(v.Name, rec.Id))
          .catch((err) => this.d.log.warn(`unmounting volume: ${(err as Error).message}`, { volume: v.Name }));
        continue;
      }
      if (needsMount(v.Options) && !stillRunning.some((u) => u.volumes.includes(v.Name))) {
        await unmountVolume(this.d.drivers.dataPath(v.Name)).catch((err) =>
          this.d.log.warn(`unmounting volume: ${(err as Error).message}`, { volume: v.Name }),
        );
      }
    }
  }

  async release(rec: VolumeContainer, removeAnonymous: boolean): Promise<void> {
    this.d.users.drop(rec.Id);
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
      await this.d.volumes
        .remove(m.Name, { force: true })
        .catch((err) => this.d.log.debug(`keeping volume ${m.Name}: ${(err as Error).message}`));
    }
  }
}
