// Cluster (CSI) volumes as dockerd and swarmkit shape them: a create request's ClusterVolumeSpec
// checked and normalised as the round trip through swarmkit's VolumeSpec leaves it (convert/
// volume.go: unknown scope → single, unknown sharing → none, unknown availability → active, mount
// access winning over block), swarmkit's create checks in its words, and the Volume view
// (ClusterVolume with ID, Version, CreatedAt/UpdatedAt, Spec, PublishStatus, Info; Scope global).
import { invalidParameter } from '../../errors.ts';
import type { ClusterVolume } from '../../types/api/index.ts';
import type { GoJson } from '../../types/go-nil.ts';
import type { VolumeView } from '../../types/volumes.ts';

export interface ClusterVolumeSpec {
  Group?: string;
  AccessMode?: {
    Scope: 'single' | 'multi';
    Sharing: 'none' | 'readonly' | 'onewriter' | 'all';
    MountVolume?: { FsType?: string; MountFlags?: string[] };
    BlockVolume?: Record<string, never>;
  };
  AccessibilityRequirements?: { Requisite?: Topology[]; Preferred?: Topology[] };
  CapacityRange?: { RequiredBytes: number; LimitBytes: number };
  Secrets?: Array<{ Key: string; Secret: string }>;
  Availability: 'active' | 'pause' | 'drain';
}

export interface Topology {
  Segments?: Record<string, string>;
}

/** A cluster volume as the store keeps it (`volumes/<id>`). */
export interface VolumeRecord {
  ID: string;
  Name: string;
  Labels: Record<string, string> | null;
  Driver: { Name: string; Options: Record<string, string> | null };
  Spec: ClusterVolumeSpec;
  CreatedAt: string;
  UpdatedAt: string;
  /** Removal asked for: swarmkit keeps the volume until its CSI plugin deleted it. */
  PendingDelete?: boolean;
}

const rpc = (desc: string) => invalidParameter(`rpc error: code = InvalidArgument desc = ${desc}`);
const obj = (v: unknown): Record<string, unknown> | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
const strMap = (v: unknown): Record<string, string> | undefined => {
  const o = obj(v);
  return o && Object.keys(o).length ? (o as Record<string, string>) : undefined;
};

const SCOPES = new Set(['single', 'multi']);
const SHARINGS = new Set(['none', 'readonly', 'onewriter', 'all']);
const AVAILABILITIES = new Set(['active', 'pause', 'drain']);

function topologies(v: unknown): Topology[] | undefined {
  if (!Array.isArray(v)) return undefined;
  return v.map((t) => {
    const segments = strMap(obj(t)?.Segments);
    return segments ? { Segments: segments } : {};
  });
}

/** The spec as swarmkit stores it and dockerd reads it back (omitempty fields left out). */
export function normalizeSpec(raw: Record<string, unknown>): ClusterVolumeSpec {
  const spec: ClusterVolumeSpec = { Availability: 'active' };
  if (typeof raw.Group === 'string' && raw.Group) spec.Group = raw.Group;
  const am = obj(raw.AccessMode);
  if (am) {
    const mode: NonNullable<ClusterVolumeSpec['AccessMode']> = {
      Scope: SCOPES.has(am.Scope as string) ? (am.Scope as 'single') : 'single',
      Sharing: SHARINGS.has(am.Sharing as string) ? (am.Sharing as 'none') : 'none',
    };
    const mount = obj(am.MountVolume);
    if (mount) {
      mode.MountVolume = {
        ...(typeof mount.FsType === 'string' && mount.FsType ? { FsType: mount.FsType } : {}),
        ...(Array.isArray(mount.MountFlags) && mount.MountFlags.length ? { MountFlags: mount.MountFlags as string[] } : {}),
      };
    } else if (obj(am.BlockVolume)) mode.BlockVolume = {};
    spec.AccessMode = mode;
  }
  const ar = obj(raw.AccessibilityRequirements);
  if (ar) {
    const requisite = topologies(ar.Requisite);
    const preferred = topologies(ar.Preferred);
    spec.AccessibilityRequirements = {
      ...(requisite?.length ? { Requisite: requisite } : {}),
      ...(preferred?.length ? { Preferred: preferred } : {}),
    };
  }
  const cr = obj(raw.CapacityRange);
  if (cr) spec.CapacityRange = { RequiredBytes: Number(cr.RequiredBytes ?? 0), LimitBytes: Number(cr.LimitBytes ?? 0) };
  if (Array.isArray(raw.Secrets) && raw.Secrets.length)
    spec.Secrets = raw.Secrets.map((s) => ({ Key: String(obj(s)?.Key ?? ''), Secret: String(obj(s)?.Secret ?? '') }));
  if (AVAILABILITIES.has(raw.Availability as string)) spec.Availability = raw.Availability as ClusterVolumeSpec['Availability'];
  return spec;
}

/** swarmkit's CreateVolume checks, in its order and words. */
export function checkCreate(name: string, spec: ClusterVolumeSpec): void {
  if (!name) throw rpc('meta: name must be provided');
  if (!spec.AccessMode) throw rpc('AccessMode must not be nil');
  if (!spec.AccessMode.MountVolume && !spec.AccessMode.BlockVolume)
    throw rpc('Volume AccessMode must specify either Mount or Block access type');
}

/** The record of a create request (volume.CreateOptions with a ClusterVolumeSpec). */
export function volumeRecord(id: string, req: Record<string, unknown>, now: string): VolumeRecord {
  const spec = normalizeSpec(obj(req.ClusterVolumeSpec) ?? {});
  const name = typeof req.Name === 'string' ? req.Name : '';
  checkCreate(name, spec);
  return {
    ID: id,
    Name: name,
    // An empty map stays an empty map (swarmkit copies it as it is); an absent one reads back null.
    Labels: (obj(req.Labels) as Record<string, string> | undefined) ?? null,
    Driver: {
      Name: typeof req.Driver === 'string' ? req.Driver : '',
      Options: (obj(req.DriverOpts) as Record<string, string> | undefined) ?? null,
    },
    Spec: spec,
    CreatedAt: now,
    UpdatedAt: now,
  };
}

/** An ISO time as Go's time.Time marshals it (RFC 3339 with the fraction's trailing zeros cut). */
export function goJsonTime(iso: string): string {
  return iso.replace(/\.(\d*?)0+Z$/, (_m, f: string) => (f ? `.${f}Z` : 'Z'));
}

/** An ISO (UTC) time as Go's time.Time.String() writes it: `2006-01-02 15:04:05.999999999 +0000 UTC`. */
export function goTimeString(iso: string): string {
  const t = goJsonTime(iso);
  return `${t.slice(0, 10)} ${t.slice(11, -1)} +0000 UTC`;
}

/**
 * The API's Volume for a cluster volume. Its Spec is the local ClusterVolumeSpec: the generated one
 * nests Secrets, CapacityRange and Availability under AccessMode, where the wire does not have them.
 */
export interface ClusterVolumeView extends VolumeView {
  ClusterVolume: Omit<GoJson<ClusterVolume>, 'Spec'> & { Spec: ClusterVolumeSpec };
}

/** The API's Volume for a cluster volume (dockerd's convert.VolumeFromGRPC). */
export function volumeView(rec: VolumeRecord, version: number): ClusterVolumeView {
  return {
    ClusterVolume: {
      ID: rec.ID,
      Version: { Index: version },
      CreatedAt: goJsonTime(rec.CreatedAt),
      UpdatedAt: goJsonTime(rec.UpdatedAt),
      Spec: rec.Spec,
    },
    CreatedAt: goTimeString(rec.CreatedAt),
    Driver: rec.Driver.Name,
    Labels: rec.Labels,
    Mountpoint: '',
    Name: rec.Name,
    Options: rec.Driver.Options,
    Scope: 'global',
  };
}
