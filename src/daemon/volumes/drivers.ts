// Where a volume's data is: the local driver's directory under <data-root>/volumes (owned by the
// remapped root with --userns-remap), or the volume plugin that holds it; and the API's view of a
// volume, which asks the plugin for its mount point and scope.
import { chown, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { notFound } from '../../errors.ts';
import type { VolumeView } from '../../types/volumes.ts';
import type { VolumePlugin, VolumeRecord } from './contract.ts';

export interface VolumeDriverDeps {
  /** <data-root>/volumes */
  root: string;
  /** Volume plugins by driver name; without it only the local driver exists. */
  plugins?: { driver(name: string): Promise<VolumePlugin> };
  /** --userns-remap: local volume directories belong to the remapped root (as dockerd's). */
  rootOwner?: { uid: number; gid: number };
}

export class VolumeDrivers {
  constructor(private readonly d: VolumeDriverDeps) {}

  dataPath(name: string): string {
    return join(this.d.root, name, '_data');
  }

  /** A local volume's _data directory (owned by the remapped root with --userns-remap), if missing. */
  async makeDataDir(path: string): Promise<void> {
    const created = await mkdir(path, { recursive: true, mode: 0o755 });
    if (created !== undefined && this.d.rootOwner) await chown(path, this.d.rootOwner.uid, this.d.rootOwner.gid);
  }

  async plugin(driver: string): Promise<VolumePlugin> {
    if (!this.d.plugins) throw notFound(`error looking up volume plugin ${driver}: plugin "${driver}" not found`);
    return this.d.plugins.driver(driver);
  }

  async view(v: VolumeRecord): Promise<VolumeView> {
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
}

/** The view of a volume whose plugin cannot answer: what the record knows. */
export function recordView(v: VolumeRecord): VolumeView {
  return {
    CreatedAt: v.CreatedAt,
    Driver: v.Driver,
    Labels: v.Labels,
    Mountpoint: '',
    Name: v.Name,
    Options: v.Options,
    Scope: 'local',
  };
}
