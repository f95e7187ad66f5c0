// `docker load`: a docker-save archive (manifest.json, legacy `<id>/layer.tar` directories or OCI
// blobs) or a plain OCI image layout (index.json). The archive is read once, as a stream: large
// files go straight into the content store under the load's lease, small ones (JSON) stay in
// memory; links inside the archive are followed only when they stay inside it. Then each image is
// unpacked and named, records last.
import { createHash, randomBytes } from 'node:crypto';
import { invalidParameter } from '../errors.ts';
import type { Descriptor } from '../supervisor/types.ts';
import { decompressed } from './decompress.ts';
import type { ImageDeps } from './import.ts';
import { MEDIA, type OciImageConfig } from './image-store.ts';
import {
  ensureReachable,
  layerMediaType,
  MT,
  setName,
  unpackLayers,
  writeConfig,
  writeManifest,
  type WriteContext,
} from './image-write.ts';
import { familiarString, parseReference, referenceString } from '../util/image-reference.ts';
import { readTar, resolveLinkTarget, safeEntryPath, TarPathGuard } from './tar-reader.ts';
import type { LoadResult } from '../types/images.ts';

const MEM_FILE_MAX = 1 << 20;
const MEM_TOTAL_MAX = 64 << 20;
const MAX_JSON = 16 << 20;
const BLOB_PATH = /^blobs\/sha256\/([a-f0-9]{64})$/;

interface ArchiveFile {
  size: number;
  /** First bytes, for sniffing compression. */
  magic: Buffer;
  data?: Buffer;
  digest?: string;
}

interface OciDescriptor {
  mediaType: string;
  digest: string;
  size: number;
  annotations?: Record<string, string>;
  platform?: { os?: string; architecture?: string; variant?: string };
}

interface ManifestJson {
  mediaType?: string;
  config: OciDescriptor;
  layers: OciDescriptor[];
}

interface Candidate {
  /** Raw manifest bytes as found in the archive (kept so the manifest digest survives). */
  bytes: Buffer;
  mediaType: string;
  manifest: ManifestJson;
  names: string[];
}

const invalid = (what: string) => invalidParameter(`invalid archive: ${what}`);
const digestOf = (b: Buffer) => `sha256:${createHash('sha256').update(b).digest('hex')}`;

async function collect(body: AsyncIterable<Buffer>, size: number): Promise<Buffer> {
  const out = Buffer.alloc(size);
  let off = 0;
  for await (const c of body) {
    c.copy(out, off);
    off += c.length;
  }
  return out;
}

class Archive {
  readonly files = new Map<string, ArchiveFile>();
  readonly links = new Map<string, string>();
  private memTotal = 0;
  private readonly stored = new Map<string, Descriptor>();

  constructor(
    private readonly deps: ImageDeps,
    private readonly lease: string,
  ) {}

  async read(source: AsyncIterable<Uint8Array>): Promise<void> {
    const guard = new TarPathGuard({ absoluteSymlinks: false });
    for await (const { header, body } of readTar(decompressed(source))) {
      const path = guard.check(header);
      if (header.kind === 'symlink') this.links.set(path, resolveLinkTarget(path, header.linkname)!);
      else if (header.kind === 'link') this.links.set(path, safeEntryPath(header.linkname));
      else if (header.kind === 'file') this.files.set(path, await this.take(path, header.size, body));
    }
  }

  private async take(path: string, size: number, body: AsyncIterable<Buffer>): Promise<ArchiveFile> {
    if (size <= MEM_FILE_MAX && this.memTotal + size <= MEM_TOTAL_MAX) {
      this.memTotal += size;
      const data = await collect(body, size);
      return { size, magic: data.subarray(0, 8), data };
    }
    // Large: straight to the content store, checked against the name when it is a blob path.
    const named = BLOB_PATH.exec(path);
    const expected = named ? `sha256:${named[1]}` : undefined;
    const hash = createHash('sha256');
    let magic = Buffer.alloc(0);
    async function* tee(): AsyncGenerator<Buffer> {
      for await (const c of body) {
        if (magic.length < 8) magic = Buffer.concat([magic, c.subarray(0, 8 - magic.length)]);
        hash.update(c);
        yield c;
      }
      if (expected && `sha256:${hash.copy().digest('hex')}` !== expected) throw invalid(`${path} does not match its digest`);
    }
    const ref = `load-${randomBytes(8).toString('hex')}`;
    const written = await this.deps.client
      .contentWrite(ref, tee(), { lease: this.lease, total: size, ...(expected ? { expected } : {}) })
      .catch(async (err) => {
        await this.deps.client.contentAbort(ref, { lease: this.lease }).catch(() => undefined); // Best effort: the lease expires and takes the partial write with it if the abort fails.
        throw err;
      });
    if (magic.length < 8 && size > 0) {
      // Already in the store (the write skipped the body): sniff the stored copy instead.
      for await (const c of this.deps.client.contentRead(written.digest, { size: Math.min(8, size) })) magic = Buffer.concat([magic, c]);
    }
    return { size, magic, digest: written.digest };
  }

  has(path: string): boolean {
    try {
      this.file(path);
      return true;
    } catch {
      // not in the archive
      return false;
    }
  }

  file(p: string): ArchiveFile {
    let cur = safeEntryPath(p);
    for (let hops = 0; hops < 32; hops++) {
      const f = this.files.get(cur);
      if (f) return f;
      const next = this.links.get(cur);
      if (next === undefined) throw invalid(`${p} is missing`);
      cur = next;
    }
    throw invalid(`too many links resolving ${p}`);
  }

  async bytes(p: string): Promise<Buffer> {
    const f = this.file(p);
    if (f.data) return f.data;
    if (f.size > MAX_JSON) throw invalid(`${p} is too large for metadata`);
    return this.deps.client.contentReadAll(f.digest!);
  }

  async json<T>(p: string): Promise<T> {
    const b = await this.bytes(p);
    try {
      return JSON.parse(b.toString('utf8')) as T;
    } catch (err) {
      throw invalid(`${p}: ${(err as Error).message}`);
    }
  }

  /** Puts the file in the content store (if it is not yet) and describes it. */
  async blob(p: string, mediaType: (magic: Buffer) => string, expect?: { digest: string; size: number }): Promise<Descriptor> {
    const key = safeEntryPath(p);
    const hit = this.stored.get(key);
    if (hit) return hit;
    const f = this.file(p);
    let digest = f.digest;
    if (f.data) {
      digest = digestOf(f.data);
      if (expect && digest !== expect.digest) throw invalid(`${p} does not match its digest`);
      await this.deps.client.contentWrite(`load-${digest}`, f.data, { expected: digest, lease: this.lease });
    }
    if (expect && (digest !== expect.digest || f.size !== Number(expect.size))) throw invalid(`${p} does not match its descriptor`);
    const desc: Descriptor = { media_type: mediaType(f.magic), digest: digest!, size: f.size };
    this.stored.set(key, desc);
    return desc;
  }
}

function blobPath(digest: string): string {
  const [alg, hex] = digest.split(':');
  if (!alg || !hex || !/^[a-z0-9]+$/.test(alg) || !/^[a-f0-9]+$/.test(hex)) throw invalid(`bad digest ${JSON.stringify(digest)}`);
  return `blobs/${alg}/${hex}`;
}

function canonicalName(name: string): string {
  try {
    return referenceString(parseReference(name));
  } catch {
    throw invalid(`invalid image name ${JSON.stringify(name)}`);
  }
}

/** The name an OCI index entry carries, if it is a full reference (a bare tag names nothing). */
function annotatedName(d: OciDescriptor): string | undefined {
  const full = d.annotations?.['io.containerd.image.name'];
  if (full) return canonicalName(full);
  const ref = d.annotations?.['org.opencontainers.image.ref.name'];
  if (ref && /[:/@]/.test(ref)) {
    try {
      return referenceString(parseReference(ref));
    } catch {
      // not a valid reference: the annotation is ignored
      return undefined;
    }
  }
  return undefined;
}

/** Image manifests reachable from index.json (indexes followed down to our platform). */
async function indexCandidates(a: Archive, platform: { os: string; architecture: string }): Promise<Candidate[]> {
  if (!a.has('index.json')) return [];
  const index = await a.json<{ manifests?: OciDescriptor[] }>('index.json');
  const out: Candidate[] = [];
  const visit = async (d: OciDescriptor, names: string[], depth: number): Promise<void> => {
    if (depth > 4 || !a.has(blobPath(d.digest))) return;
    const bytes = await a.bytes(blobPath(d.digest));
    if (digestOf(bytes) !== d.digest) throw invalid(`blob ${d.digest} does not match its digest`);
    const parsed = JSON.parse(bytes.toString('utf8')) as ManifestJson & { manifests?: OciDescriptor[] };
    const mediaType = d.mediaType || parsed.mediaType || MT.ociManifest;
    if (mediaType === MEDIA.ociIndex || mediaType === MEDIA.dockerList || parsed.manifests) {
      const list = parsed.manifests ?? [];
      const pick =
        list.find(
          (m) => m.platform?.os === platform.os && m.platform?.architecture === platform.architecture && a.has(blobPath(m.digest)),
        ) ?? list.find((m) => !m.platform && a.has(blobPath(m.digest)));
      if (pick) await visit(pick, names, depth + 1);
      return;
    }
    if (!parsed.config || !Array.isArray(parsed.layers)) return; // attestations and other artifacts
    out.push({ bytes, mediaType, manifest: parsed, names });
  };
  for (const d of index.manifests ?? []) {
    const name = annotatedName(d);
    await visit(d, name ? [name] : [], 0);
  }
  // One manifest named by several entries: one candidate with all the names.
  const merged = new Map<string, Candidate>();
  for (const c of out) {
    const key = digestOf(c.bytes);
    const seen = merged.get(key);
    if (seen) seen.names.push(...c.names.filter((n) => !seen.names.includes(n)));
    else merged.set(key, c);
  }
  return [...merged.values()];
}

interface Plan {
  configPath: string;
  names: string[];
  /** From an OCI manifest in the archive … */
  candidate?: Candidate;
  /** … or from manifest.json's layer paths. */
  layerPaths?: string[];
}

export async function loadImages(deps: ImageDeps, source: AsyncIterable<Uint8Array>): Promise<LoadResult> {
  const { client } = deps;
  const platform = deps.platform ?? { os: 'linux', architecture: 'amd64' };
  return client.withLease(async (lease) => {
    const a = new Archive(deps, lease);
    await a.read(source);
    const candidates = await indexCandidates(a, platform);
    const plans: Plan[] = [];
    if (a.has('manifest.json')) {
      const entries = await a.json<Array<{ Config?: string; RepoTags?: string[] | null; Layers?: string[] }>>('manifest.json');
      if (!Array.isArray(entries)) throw invalid('manifest.json is not a list');
      for (const e of entries) {
        if (typeof e.Config !== 'string' || !Array.isArray(e.Layers)) throw invalid('manifest.json entry without Config or Layers');
        const configDigest = digestOf(await a.bytes(e.Config));
        const candidate = candidates.find((c) => c.manifest.config.digest === configDigest);
        plans.push({
          configPath: e.Config,
          names: (e.RepoTags ?? []).map(canonicalName),
          ...(candidate ? { candidate } : { layerPaths: e.Layers }),
        });
      }
    } else if (candidates.length) {
      for (const c of candidates) plans.push({ configPath: blobPath(c.manifest.config.digest), names: c.names, candidate: c });
    } else {
      throw invalid(a.has('repositories') ? 'the legacy (pre-1.10) image format is not supported' : 'no manifest.json or index.json found');
    }

    const w: WriteContext = { client, snapshotter: deps.snapshotter, lease };
    const messages: string[] = [];
    const ids: string[] = [];
    for (const plan of plans) {
      const configBytes = await a.bytes(plan.configPath);
      let config: OciImageConfig;
      try {
        config = JSON.parse(configBytes.toString('utf8')) as OciImageConfig;
      } catch (err) {
        throw invalid(`${plan.configPath}: ${(err as Error).message}`);
      }
      const diffIds = config.rootfs?.diff_ids;
      if (!Array.isArray(diffIds)) throw invalid(`${plan.configPath} has no rootfs.diff_ids`);
      const docker = !plan.candidate || plan.candidate.mediaType === MT.dockerManifest;
      const layers: Descriptor[] = [];
      if (plan.candidate) {
        for (const l of plan.candidate.manifest.layers) {
          layers.push(await a.blob(blobPath(l.digest), () => l.mediaType, { digest: l.digest, size: l.size }));
        }
      } else {
        for (const p of plan.layerPaths!) layers.push(await a.blob(p, (m) => layerMediaType(m, true)));
      }
      const top = await unpackLayers(w, layers, diffIds);
      const configMediaType = plan.candidate?.manifest.config.mediaType ?? (docker ? MT.dockerConfig : MT.ociConfig);
      const configDesc = await writeConfig(w, configBytes, top, configMediaType);
      const manifest = plan.candidate
        ? await writeManifest(w, { config: configDesc, layers, mediaType: plan.candidate.mediaType, bytes: plan.candidate.bytes })
        : await writeManifest(w, { config: configDesc, layers, mediaType: MT.dockerManifest });
      const id = configDesc.digest;
      ids.push(id);
      for (const name of plan.names) {
        const { replaced } = await setName(client, deps.images, name, manifest, {});
        const familiar = familiarString(parseReference(name));
        if (replaced && replaced.id !== id)
          messages.push(`The image ${familiar} already exists, renaming the old one with ID ${replaced.id} to empty string`);
        messages.push(`Loaded image: ${familiar}`);
      }
      if (!plan.names.length) {
        await ensureReachable(client, deps.images, manifest, {}, id);
        messages.push(`Loaded image ID: ${id}`);
      }
    }
    await deps.images.list().catch(() => undefined); // Refreshes the image cache for the next listing; a failure here only delays that, the load is done.
    return { messages, ids };
  });
}
