// The `Manifests` of an image list entry or inspect answer (API 1.47 / 1.48, `manifests=1`): one
// ImageManifestSummary per manifest reachable from the image's target, as dockerd's containerd
// image store builds them (multiPlatformSummary): ID and Descriptor of the manifest, whether its
// config and layers are all present, the sizes of what is present (content, and unpacked for
// images), and its kind — an image (platform, unpacked size, the containers using it), an
// attestation (the manifest it is for), or unknown.
import { chainIds } from './image-store.ts';

/** An OCI descriptor as it is written on the wire (index entries keep platform and annotations). */
export interface WireDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: WirePlatform;
  [key: string]: unknown;
}

export interface WirePlatform {
  architecture: string;
  os: string;
  'os.version'?: string;
  'os.features'?: string[];
  variant?: string;
}

export interface ManifestSummary {
  ID: string;
  Descriptor: WireDescriptor;
  Available: boolean;
  Size: { Content: number; Total: number };
  Kind: 'image' | 'attestation' | 'unknown';
  ImageData?: { Platform: WirePlatform; Size: { Unpacked: number }; Containers: string[] | null };
  AttestationData?: { For: string };
}

export interface ManifestSummaryDeps {
  /** Whether the content store holds this blob. */
  has(digest: string): Promise<boolean>;
  /** A JSON blob of the content store; rejects when it is absent. */
  readJson(digest: string): Promise<unknown>;
  /** Unpacked size of a layer chain (the sum of its snapshots' own usage; 0 for missing ones). */
  unpacked(chain: string[]): Promise<number>;
  /** The containers created from the image whose config digest (image ID) this is. */
  containersOf(imageId: string): string[];
}

const INDEX_TYPES = new Set(['application/vnd.oci.image.index.v1+json', 'application/vnd.docker.distribution.manifest.list.v2+json']);
const MANIFEST_TYPES = new Set(['application/vnd.oci.image.manifest.v1+json', 'application/vnd.docker.distribution.manifest.v2+json']);
const DOCKER_LAYER_TYPES = new Set([
  'application/vnd.docker.image.rootfs.diff.tar',
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
  'application/vnd.docker.image.rootfs.foreign.diff.tar',
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
]);
/** buildkit's attestation annotations (a manifest that describes another one). */
const REFERENCE_TYPE = 'vnd.docker.reference.type';
const REFERENCE_DIGEST = 'vnd.docker.reference.digest';
const DIGEST = /^sha256:[a-f0-9]{64}$/;
/** Indexes nest; a hostile or broken chain of them stops here. */
const MAX_DEPTH = 8;

/** containerd's IsLayerType: OCI layers of any kind, Docker's layer types (a `+suffix` dropped). */
export function isLayerType(mediaType: string): boolean {
  if (mediaType.startsWith('application/vnd.oci.image.layer.')) return true;
  return DOCKER_LAYER_TYPES.has(mediaType.split('+')[0]!);
}

interface Manifest {
  config?: WireDescriptor;
  layers?: WireDescriptor[];
}

/** Every manifest reachable from `target` (itself, or an index's entries, nested), in order. */
export async function manifestSummaries(target: WireDescriptor, deps: ManifestSummaryDeps): Promise<ManifestSummary[]> {
  const out: ManifestSummary[] = [];
  const walk = async (desc: WireDescriptor, depth: number): Promise<void> => {
    if (MANIFEST_TYPES.has(desc.mediaType)) {
      out.push(await summarize(desc, deps));
      return;
    }
    if (!INDEX_TYPES.has(desc.mediaType) || depth >= MAX_DEPTH) return;
    let index: { manifests?: WireDescriptor[] };
    try {
      index = (await deps.readJson(desc.digest)) as typeof index;
    } catch {
      return; // an index not held locally: nothing below it is reachable (dockerd skips it too)
    }
    for (const child of index.manifests ?? []) await walk(child, depth + 1);
  };
  await walk(target, 0);
  return out;
}

async function summarize(desc: WireDescriptor, deps: ManifestSummaryDeps): Promise<ManifestSummary> {
  const summary: ManifestSummary = {
    ID: desc.digest,
    Descriptor: desc,
    Available: false,
    Size: { Content: 0, Total: 0 },
    Kind: 'unknown',
  };
  let manifest: Manifest | undefined;
  try {
    manifest = (await deps.readJson(desc.digest)) as Manifest;
  } catch {
    manifest = undefined; // the manifest is not held locally: not available, no content counted
  }
  const children = manifest ? [manifest.config, ...(manifest.layers ?? [])].filter((d): d is WireDescriptor => !!d) : [];
  const present = await Promise.all(children.map((d) => deps.has(d.digest)));
  if (manifest) {
    summary.Available = present.every(Boolean);
    summary.Size.Content = Number(desc.size) + children.reduce((n, d, i) => n + (present[i] ? Number(d.size) : 0), 0);
    summary.Size.Total = summary.Size.Content;
  }

  // A pseudo image (attestation, unknown/unknown platform, layers of no layer type) is not an image.
  const attestation = desc.annotations?.[REFERENCE_TYPE] !== undefined;
  const unknownPlatform = desc.platform?.os === 'unknown' && desc.platform?.architecture === 'unknown';
  const layers = manifest?.layers ?? [];
  const pseudo = attestation || unknownPlatform || (layers.length > 0 && !layers.some((l) => isLayerType(l.mediaType)));
  if (pseudo) {
    const forDigest = desc.annotations?.[REFERENCE_DIGEST];
    if (attestation && forDigest !== undefined && DIGEST.test(forDigest)) {
      summary.Kind = 'attestation';
      summary.AttestationData = { For: forDigest };
    }
    return summary;
  }

  summary.Kind = 'image';
  const data: NonNullable<ManifestSummary['ImageData']> = {
    Platform: desc.platform ?? { architecture: '', os: '' },
    Size: { Unpacked: 0 },
    Containers: null,
  };
  summary.ImageData = data;
  if (!summary.Available || !manifest?.config) return summary;
  let config: {
    architecture?: string;
    os?: string;
    'os.version'?: string;
    'os.features'?: string[];
    variant?: string;
    rootfs?: { diff_ids?: string[] };
  };
  try {
    config = (await deps.readJson(manifest.config.digest)) as typeof config;
  } catch {
    return summary; // removed between the presence check and the read: reported as it was seen
  }
  if (!desc.platform) data.Platform = platformOf(config);
  const unpacked = await deps.unpacked(chainIds(config.rootfs?.diff_ids ?? []));
  data.Size.Unpacked = unpacked;
  summary.Size.Total += unpacked;
  const users = deps.containersOf(manifest.config.digest);
  if (users.length) data.Containers = users;
  return summary;
}

/** ocispec.Platform read from an image config (its fields share their names). */
function platformOf(c: {
  architecture?: string;
  os?: string;
  'os.version'?: string;
  'os.features'?: string[];
  variant?: string;
}): WirePlatform {
  return {
    architecture: c.architecture ?? '',
    os: c.os ?? '',
    ...(c['os.version'] ? { 'os.version': c['os.version'] } : {}),
    ...(c['os.features']?.length ? { 'os.features': c['os.features'] } : {}),
    ...(c.variant ? { variant: c.variant } : {}),
  };
}
