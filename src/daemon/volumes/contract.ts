// The volume service's types: its persisted record, what it offers the containers service and the
// task launcher (ContainerVolumes), and what it needs of a volume plugin and of containers.
import type { ResolvedMount } from '../../oci/mounts.ts';
import type { Mount } from '../../supervisor/types.ts';
import type { ContainerConfig, HostConfig } from '../../types/container-api.ts';
import type { MountPoint } from '../containers/record.ts';

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

/** A volume event (create, destroy, mount, unmount) for the events stream; driver read from the record unless given. */
export type VolumeEvent = (action: string, name: string, attrs?: Record<string, string>, driver?: string) => void;
