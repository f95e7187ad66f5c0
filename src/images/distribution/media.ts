// Manifest and layer media types, and platform matching for manifest lists / OCI indexes.
import { invalidParameter, notFound } from '../../errors.ts';

export const MT = {
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  schema1: 'application/vnd.docker.distribution.manifest.v1+json',
  schema1Signed: 'application/vnd.docker.distribution.manifest.v1+prettyjws',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
} as const;

export const isIndex = (mt: string) => mt === MT.dockerList || mt === MT.ociIndex;
export const isManifest = (mt: string) => mt === MT.dockerManifest || mt === MT.ociManifest;
export const isSchema1 = (mt: string) => mt === MT.schema1 || mt === MT.schema1Signed;

const LAYER_TYPES = new Set([
  'application/vnd.docker.image.rootfs.diff.tar.gzip',
  'application/vnd.docker.image.rootfs.foreign.diff.tar.gzip',
  'application/vnd.oci.image.layer.v1.tar',
  'application/vnd.oci.image.layer.v1.tar+gzip',
  'application/vnd.oci.image.layer.v1.tar+zstd',
  'application/vnd.oci.image.layer.nondistributable.v1.tar',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+gzip',
  'application/vnd.oci.image.layer.nondistributable.v1.tar+zstd',
  'application/vnd.docker.image.rootfs.diff.tar',
]);

export function isLayer(mt: string): boolean {
  return LAYER_TYPES.has(mt);
}

/** Layers pushed by reference only (Windows base layers): never uploaded. */
export const isForeign = (mt: string) => mt.includes('foreign') || mt.includes('nondistributable');

export interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
  urls?: string[];
  annotations?: Record<string, string>;
  platform?: Platform;
}

export interface Platform {
  architecture: string;
  os: string;
  'os.version'?: string;
  'os.features'?: string[];
  variant?: string;
  features?: string[];
}

export interface ImageManifest {
  schemaVersion: number;
  mediaType?: string;
  config: Descriptor;
  layers: Descriptor[];
}

export interface ImageIndex {
  schemaVersion: number;
  mediaType?: string;
  manifests: Descriptor[];
}

export const DEFAULT_PLATFORM: Platform = { os: 'linux', architecture: 'amd64' };

const ARCH_ALIASES: Record<string, string> = {
  x86_64: 'amd64',
  'x86-64': 'amd64',
  aarch64: 'arm64',
  armhf: 'arm',
  armel: 'arm',
  i386: '386',
};

/** "linux/arm64/v8" → platform (normalised like containerd's platforms package). */
export function parsePlatform(spec: string): Platform {
  const parts = spec.trim().toLowerCase().split('/');
  if (parts.length < 1 || parts.length > 3 || parts.some((p) => !p || !/^[a-z0-9_.-]+$/.test(p))) {
    throw invalidParameter(`"${spec}": unknown operating system or architecture: invalid argument`);
  }
  let [os, arch, variant] = parts as [string, string | undefined, string | undefined];
  if (!arch) {
    // A bare architecture or OS: containerd accepts either; treat known OSes as OS.
    if (['linux', 'windows', 'darwin', 'freebsd'].includes(os)) arch = DEFAULT_PLATFORM.architecture;
    else {
      arch = os;
      os = 'linux';
    }
  }
  arch = ARCH_ALIASES[arch] ?? arch;
  if (arch === 'arm64' && variant === 'v8') variant = undefined;
  if (arch === 'arm' && !variant) variant = 'v7';
  return { os, architecture: arch, ...(variant ? { variant } : {}) };
}

export function formatPlatform(p: Platform): string {
  return [p.os, p.architecture, p.variant].filter(Boolean).join('/');
}

/** Whether an index entry's platform runs on the wanted one. */
export function platformMatches(have: Platform | undefined, want: Platform): boolean {
  if (!have) return false;
  const arch = ARCH_ALIASES[have.architecture] ?? have.architecture;
  if (have.os !== want.os || arch !== want.architecture) return false;
  let hv = have.variant;
  if (arch === 'arm64' && hv === 'v8') hv = undefined;
  if (arch === 'arm' && !hv) hv = 'v7';
  return !want.variant || !hv || hv === want.variant;
}

/** Picks the manifest for the platform from an index (dockerd's error when none matches). */
export function selectManifest(index: ImageIndex, want: Platform): Descriptor {
  const candidates = index.manifests.filter((m) => isManifest(m.mediaType) || !m.mediaType);
  const exact = candidates.find(
    (m) => platformMatches(m.platform, want) && (m.platform?.variant ?? '') === (want.variant ?? m.platform?.variant ?? ''),
  );
  const pick = exact ?? candidates.find((m) => platformMatches(m.platform, want));
  if (!pick) throw notFound(`no matching manifest for ${formatPlatform(want)} in the manifest list entries`);
  return pick;
}
