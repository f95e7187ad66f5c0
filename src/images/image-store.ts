// Local images as the daemon sees them: containerd image records (name → manifest) resolved to
// their config, ID (sha256 of the config), layers and snapshot chain. Lookups by reference, by ID
// or unique ID prefix, as dockerd does. Manifests and configs are immutable, so they are cached.
import { createHash } from 'node:crypto';
import { isNotFound, notFound, invalidParameter } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Descriptor, ImageRecord } from '../supervisor/types.ts';
import { parseJsonSliced, rememberJsonText, stringifyJsonSliced } from '../util/json-sliced.ts';
import { familiarString, isDanglingName, looksLikeImageId, parseReference, referenceString } from '../util/image-reference.ts';

export const MEDIA = {
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
} as const;

export interface OciImageConfig {
  architecture?: string;
  os?: string;
  created?: string;
  author?: string;
  config?: {
    User?: string;
    Env?: string[];
    Entrypoint?: string[] | null;
    Cmd?: string[] | null;
    WorkingDir?: string;
    Labels?: Record<string, string> | null;
    ExposedPorts?: Record<string, object> | null;
    Volumes?: Record<string, object> | null;
    StopSignal?: string;
    Healthcheck?: Record<string, unknown>;
    OnBuild?: string[] | null;
    Shell?: string[];
  };
  rootfs: { type: string; diff_ids: string[] };
  history?: Array<{ created?: string; created_by?: string; empty_layer?: boolean; comment?: string }>;
}

export interface LocalImage {
  /** sha256:<config digest> */
  id: string;
  /** containerd record names (canonical references) pointing at this image. */
  names: string[];
  record: ImageRecord;
  /** Every record pointing at this image, dangling ones (moby-dangling@…) included. */
  records: ImageRecord[];
  manifestDigest: string;
  manifest: { config: Descriptor; layers: Descriptor[] };
  config: OciImageConfig;
  chainId: string;
  /** Sum of compressed layer sizes plus config. */
  size: number;
}

export function chainIds(diffIds: string[]): string[] {
  const out: string[] = [];
  for (const d of diffIds) {
    const prev = out[out.length - 1];
    out.push(prev ? 'sha256:' + createHash('sha256').update(`${prev} ${d}`).digest('hex') : d);
  }
  return out;
}

/** A blob this large holds a config worth the care above (tens of thousands of labels). */
const LARGE_BLOB = 64 * 1024;

export class ImageStore {
  private readonly blobs = new Map<string, unknown>();
  private cachedCount = 0;

  constructor(
    private readonly client: SupervisorClient,
    private readonly platform = { os: 'linux', architecture: 'amd64' },
  ) {}

  private async blobJson<T>(digest: string): Promise<T> {
    const hit = this.blobs.get(digest);
    if (hit) return hit as T;
    // A config with 50 000 labels took ~30 ms to parse at once: large blobs are parsed in slices.
    const text = (await this.client.contentReadAll(digest)).toString('utf8');
    const parsed = (await parseJsonSliced(text)) as T;
    // Blobs are immutable and so are their cached objects: a large config's labels are serialised
    // here, in slices, once, for the image's events (events/actors.ts), not on each event at once.
    const labels = (parsed as { config?: { Labels?: unknown } } | null)?.config?.Labels;
    if (text.length > LARGE_BLOB && labels && typeof labels === 'object') {
      Object.freeze(labels);
      rememberJsonText(labels, (await stringifyJsonSliced(labels))!);
    }
    const raced = this.blobs.get(digest); // another lookup parsed it meanwhile: one copy for everyone
    if (raced) return raced as T;
    this.blobs.set(digest, parsed);
    return parsed;
  }

  /** Follows an index/manifest list down to the manifest for our platform. */
  private async manifestFor(target: Descriptor): Promise<{ digest: string; manifest: { config: Descriptor; layers: Descriptor[] } }> {
    if (target.media_type === MEDIA.ociIndex || target.media_type === MEDIA.dockerList) {
      const index = await this.blobJson<{
        manifests: Array<{ digest: string; mediaType: string; size: number; platform?: { os: string; architecture: string } }>;
      }>(target.digest);
      // Our platform first; but a pull for another platform (--platform) stores only that one
      // manifest of the index, so fall back to whichever entry is present locally.
      const mine = (m: { platform?: { os: string; architecture: string } }) =>
        m.platform?.os === this.platform.os && m.platform?.architecture === this.platform.architecture;
      const ordered = [
        ...index.manifests.filter(mine),
        ...index.manifests.filter((m) => !m.platform),
        ...index.manifests.filter((m) => m.platform && !mine(m)),
      ];
      for (const pick of ordered) {
        try {
          return await this.manifestFor({ media_type: pick.mediaType, digest: pick.digest, size: String(pick.size) });
        } catch (err) {
          if (!isNotFound(err)) throw err;
        }
      }
      throw notFound(`no matching manifest for ${this.platform.os}/${this.platform.architecture} in the manifest list entries`);
    }
    const m = await this.blobJson<{
      config: { digest: string; mediaType: string; size: number };
      layers: Array<{ digest: string; mediaType: string; size: number }>;
    }>(target.digest);
    const desc = (d: { digest: string; mediaType: string; size: number }): Descriptor => ({
      media_type: d.mediaType,
      digest: d.digest,
      size: String(d.size),
    });
    return { digest: target.digest, manifest: { config: desc(m.config), layers: m.layers.map(desc) } };
  }

  private async load(record: ImageRecord): Promise<LocalImage> {
    const { digest, manifest } = await this.manifestFor(record.target);
    const config = await this.blobJson<OciImageConfig>(manifest.config.digest);
    const chain = chainIds(config.rootfs?.diff_ids ?? []);
    const size = manifest.layers.reduce((n, l) => n + Number(l.size), 0);
    const names = isDanglingName(record.name) ? [] : [record.name];
    return {
      id: manifest.config.digest,
      names,
      record,
      records: [record],
      manifestDigest: digest,
      manifest,
      config,
      chainId: chain[chain.length - 1] ?? '',
      size,
    };
  }

  /** Every local image, grouped by ID (several names may point at one image). */
  async list(): Promise<LocalImage[]> {
    const byId = new Map<string, LocalImage>();
    for (const rec of await this.client.images.list()) {
      let img: LocalImage;
      try {
        img = await this.load(rec);
      } catch {
        continue; // incomplete content (e.g. an interrupted pull): not an image yet
      }
      const seen = byId.get(img.id);
      if (seen) {
        seen.records.push(rec);
        if (!isDanglingName(rec.name)) seen.names.push(rec.name);
      } else byId.set(img.id, img);
    }
    this.cachedCount = byId.size;
    return [...byId.values()];
  }

  /** Count as of the last list/resolve (for /info; never blocks on containerd). */
  count(): number {
    return this.cachedCount;
  }

  /** By reference (busybox, busybox:1, name@digest), full ID, or unique ID prefix. */
  async resolve(input: string): Promise<LocalImage> {
    const hex = input.replace(/^sha256:/, '');
    if (looksLikeImageId(input) || (/^[a-f0-9]{4,63}$/.test(hex) && !input.includes(':'))) {
      const matches = (await this.list()).filter((i) => i.id.slice(7).startsWith(hex));
      if (matches.length === 1) return matches[0]!;
      if (matches.length > 1 && !looksLikeImageId(input)) throw invalidParameter(`multiple images found with prefix ${input}`);
      if (looksLikeImageId(input)) throw notFound(`No such image: ${input}`);
    }
    let ref;
    try {
      ref = parseReference(input);
    } catch {
      throw notFound(`No such image: ${input}`);
    }
    try {
      // name:tag@digest names the digest (as dockerd): a pull by digest records name@digest.
      const rec = await this.client.images.get(
        referenceString(ref.digest ? { domain: ref.domain, path: ref.path, digest: ref.digest } : ref),
      );
      return await this.load(rec);
    } catch (err) {
      if (isNotFound(err)) throw notFound(`No such image: ${familiarString(ref)}`);
      throw err;
    }
  }
}
