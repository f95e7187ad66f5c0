// The `platform` parameters of the image routes (API 1.48+: a JSON-encoded OCI platform), as
// dockerd's router decodes them (httputils.DecodePlatform), and its check that a local image is of
// the platform asked for (daemon/images GetImage: a fuzzy match, an arm64 host running arm/v7 and
// lower). Images here have one platform each, so a platform selects the image or refuses it.
import { invalidParameter, notFound } from '../../errors.ts';
import { decodeStruct, type Kind } from '../../oci/wire-schema.ts';
import { familiarIfCanonical } from '../../util/image-reference.ts';

export interface Platform {
  os: string;
  architecture: string;
  variant?: string;
}

const PLATFORM: Record<string, Kind> = {
  architecture: 'string',
  os: 'string',
  'os.version': 'string',
  'os.features': { array: 'string', goType: '[]string' },
  variant: 'string',
};

/** A `platform` parameter: JSON of an OCI platform with os and architecture (400s as dockerd). */
export function decodePlatform(json: string): Platform {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (err) {
    throw invalidParameter(`failed to parse platform: ${(err as Error).message}`);
  }
  let p: Record<string, unknown>;
  try {
    p = decodeStruct(raw, PLATFORM, 'Platform');
  } catch (err) {
    // json.Unmarshal's own words: the body decoder's "invalid JSON" heading is not DecodePlatform's.
    throw invalidParameter(`failed to parse platform: ${(err as Error).message.replace(/^invalid JSON: /, '')}`);
  }
  const os = (p.os as string | undefined) ?? '';
  const architecture = (p.architecture as string | undefined) ?? '';
  const optional = !!p.variant || !!p['os.version'] || ((p['os.features'] as string[] | undefined)?.length ?? 0) > 0;
  if (!os && !architecture && optional) throw invalidParameter('optional platform fields provided, but OS and Architecture are missing');
  if (!os || !architecture) throw invalidParameter('both OS and Architecture must be provided');
  return { os, architecture, ...(p.variant ? { variant: p.variant as string } : {}) };
}

/** The one `platform` parameter of save and load (1.48+): more than one is refused. */
export function singlePlatform(values: string[]): Platform | undefined {
  if (values.length > 1) throw invalidParameter('multiple platform parameters not supported');
  return values[0] ? decodePlatform(values[0]) : undefined;
}

/** containerd's normalisation: architecture aliases, arm's default variant, arm64's v8. */
function normalize(p: Platform): Required<Platform> {
  let arch = p.architecture.toLowerCase();
  let variant = (p.variant ?? '').toLowerCase();
  if (arch === 'x86_64' || arch === 'x86-64') arch = 'amd64';
  else if (arch === 'i386') arch = '386';
  else if (arch === 'aarch64' || arch === 'arm64') {
    arch = 'arm64';
    if (variant === '8' || variant === 'v8') variant = '';
  } else if (arch === 'armhf') [arch, variant] = ['arm', 'v7'];
  else if (arch === 'armel') [arch, variant] = ['arm', 'v6'];
  else if (arch === 'arm') {
    if (variant === '') variant = 'v7';
    else if (/^\d+$/.test(variant)) variant = `v${variant}`;
  }
  return { os: p.os.toLowerCase(), architecture: arch, variant };
}

const armLevel = (v: string) => Number(v.replace(/^v/, '')) || 0;

/** Whether an image of `have` serves a request for `want` (platforms.Only with dockerd's fallback). */
export function platformMatches(want: Platform, have: Platform): boolean {
  const w = normalize(want);
  const h = normalize(have);
  if (w.os !== h.os) return false;
  if (w.architecture === h.architecture) {
    if (w.architecture !== 'arm') return !w.variant || !h.variant || w.variant === h.variant || h.variant === '';
    return armLevel(h.variant) <= armLevel(w.variant);
  }
  // An arm64 host runs 32-bit arm images up to v8.
  return w.architecture === 'arm64' && h.architecture === 'arm' && armLevel(h.variant) <= 8;
}

const format = (p: Platform) => [p.os, p.architecture, p.variant].filter(Boolean).join('/');

/** dockerd's 404 when the image the name finds is of another platform. */
export function checkImagePlatform(ref: string, image: { Os?: unknown; Architecture?: unknown; Variant?: unknown }, want: Platform): void {
  const have: Platform = {
    os: typeof image.Os === 'string' ? image.Os : '',
    architecture: typeof image.Architecture === 'string' ? image.Architecture : '',
    ...(typeof image.Variant === 'string' && image.Variant ? { variant: image.Variant } : {}),
  };
  // An image whose config names no platform (an old import) is not refused for it.
  if (!have.os || !have.architecture || platformMatches(want, have)) return;
  throw notFound(
    `image with reference ${familiarIfCanonical(ref)} was found but its platform (${format(have)}) does not match the specified platform (${format(want)})`,
  );
}
