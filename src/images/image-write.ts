// Writing images into containerd the way a pull does, shared by load, import and commit: layers
// unpacked into snapshots named by chain ID, config and manifest blobs carrying the gc.ref labels
// that keep layers and the snapshot alive, and image records created last. Callers hold a lease
// for the whole sequence, so nothing half-written survives a failure and nothing is listed early.
import { sniffCompression } from '../wire/compression.ts';
import { createHash, randomBytes, webcrypto } from 'node:crypto';
import { EngineError, invalidParameter, isNotFound } from '../errors.ts';
import type { Logger } from '../util/log.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Descriptor, ImageRecord } from '../supervisor/types.ts';
import { chainIds, type ImageStore, type LocalImage } from './image-store.ts';
import { DANGLING_PREFIX, isDanglingName } from '../util/image-reference.ts';

export const MT = {
  ociManifest: 'application/vnd.oci.image.manifest.v1+json',
  ociIndex: 'application/vnd.oci.image.index.v1+json',
  ociConfig: 'application/vnd.oci.image.config.v1+json',
  ociLayer: 'application/vnd.oci.image.layer.v1.tar',
  ociLayerGzip: 'application/vnd.oci.image.layer.v1.tar+gzip',
  ociLayerZstd: 'application/vnd.oci.image.layer.v1.tar+zstd',
  dockerManifest: 'application/vnd.docker.distribution.manifest.v2+json',
  dockerList: 'application/vnd.docker.distribution.manifest.list.v2+json',
  dockerConfig: 'application/vnd.docker.container.image.v1+json',
  dockerLayer: 'application/vnd.docker.image.rootfs.diff.tar',
  dockerLayerGzip: 'application/vnd.docker.image.rootfs.diff.tar.gzip',
} as const;

export const LABEL = {
  uncompressed: 'containerd.io/uncompressed',
  /** The parent image ID of a committed image (OCI configs have no parent field). */
  parent: 'org.mobyproject.image.parent',
  snapshotRef: (snapshotter: string) => `containerd.io/gc.ref.snapshot.${snapshotter}`,
} as const;

export interface WriteContext {
  client: SupervisorClient;
  snapshotter: string;
  lease: string;
  /** For the debug lines of best-effort clean-ups. */
  log?: Logger;
}

export const sha256 = (b: Buffer | string): string => `sha256:${createHash('sha256').update(b).digest('hex')}`;

/**
 * sha256() off the event loop for large buffers: WebCrypto digests on libuv's thread pool (a 4 MiB
 * config hashed here took ~10 ms of the loop, twice per commit).
 */
export async function sha256Off(b: Buffer): Promise<string> {
  if (b.length < 256 * 1024) return sha256(b);
  return `sha256:${Buffer.from(await webcrypto.subtle.digest('SHA-256', b)).toString('hex')}`;
}

/** Layer media type from the first bytes of the blob. */
export function layerMediaType(magic: Buffer, docker: boolean): string {
  const kind = sniffCompression(magic);
  if (kind === 'gzip') return docker ? MT.dockerLayerGzip : MT.ociLayerGzip;
  if (kind === 'zstd') return MT.ociLayerZstd;
  return docker ? MT.dockerLayer : MT.ociLayer;
}

export const isCompressedLayer = (mediaType: string) => /gzip|zstd/.test(mediaType);

async function snapshotExists(w: WriteContext, key: string): Promise<boolean> {
  try {
    await w.client.snapshots.stat(key, { snapshotter: w.snapshotter, lease: w.lease });
    return true;
  } catch (err) {
    if (isNotFound(err)) return false;
    throw err;
  }
}

/**
 * Unpacks layers onto their parents (skipping chains already there) and checks each applied
 * layer's digest against the config's diff ID. Compressed layers get the `uncompressed` label.
 * Returns the top chain ID.
 */
export async function unpackLayers(w: WriteContext, layers: Descriptor[], diffIds: string[]): Promise<string> {
  if (layers.length !== diffIds.length)
    throw invalidParameter(`image has ${layers.length} layers but its config lists ${diffIds.length} diff IDs`);
  const chain = chainIds(diffIds);
  let have = chain.length;
  while (have > 0 && !(await snapshotExists(w, chain[have - 1]!))) have--;
  for (let i = have; i < chain.length; i++) {
    const key = `extract-${randomBytes(6).toString('hex')}-${chain[i]!.slice(7, 19)}`;
    const mounts = await w.client.snapshots.prepare(
      { key, parent: i ? chain[i - 1]! : '', snapshotter: w.snapshotter },
      { lease: w.lease },
    );
    try {
      const applied = await w.client.diff.apply(layers[i]!, mounts, { lease: w.lease });
      if (applied.digest !== diffIds[i])
        throw invalidParameter(`layer ${layers[i]!.digest} has diff ID ${applied.digest}, the image config says ${diffIds[i]}`);
      await w.client.snapshots.commit({ name: chain[i]!, key, snapshotter: w.snapshotter }, { lease: w.lease });
    } catch (err) {
      // The snapshot is under the write's lease; removing it early is an optimisation.
      await w.client.snapshots
        .remove(key, { snapshotter: w.snapshotter, lease: w.lease })
        .catch((e: Error) => w.log?.debug(`unpack: snapshot ${key} not removed: ${e.message}`));
      if (!(err instanceof EngineError && err.code === 'CONFLICT' && (await snapshotExists(w, chain[i]!)))) throw err; // a concurrent unpack won
    }
  }
  for (let i = have; i < layers.length; i++) {
    if (isCompressedLayer(layers[i]!.media_type)) {
      await w.client.contentUpdate(
        { digest: layers[i]!.digest, labels: { [LABEL.uncompressed]: diffIds[i]! } },
        [`labels.${LABEL.uncompressed}`],
        { lease: w.lease },
      );
    }
  }
  return chain[chain.length - 1] ?? '';
}

/** Stores a config blob labelled so that it keeps the unpacked top snapshot alive. */
export async function writeConfig(
  w: WriteContext,
  bytes: Buffer,
  topChain: string,
  mediaType: string = MT.ociConfig,
  digest: string = sha256(bytes),
): Promise<Descriptor> {
  const labels = topChain ? { [LABEL.snapshotRef(w.snapshotter)]: topChain } : {};
  await w.client.contentWrite(`config-${digest}`, bytes, { expected: digest, lease: w.lease, labels });
  return { media_type: mediaType, digest, size: bytes.length };
}

/** Stores a manifest blob (given bytes, or built from config and layers) with its gc.ref labels. */
export async function writeManifest(
  w: WriteContext,
  m: { config: Descriptor; layers: Descriptor[]; mediaType?: string; bytes?: Buffer },
): Promise<Descriptor> {
  const mediaType = m.mediaType ?? MT.ociManifest;
  const bytes =
    m.bytes ??
    Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType,
        config: { mediaType: m.config.media_type, digest: m.config.digest, size: Number(m.config.size) },
        layers: m.layers.map((l) => ({ mediaType: l.media_type, digest: l.digest, size: Number(l.size) })),
      }),
    );
  const digest = sha256(bytes);
  const labels: Record<string, string> = { 'containerd.io/gc.ref.content.config': m.config.digest };
  m.layers.forEach((l, i) => (labels[`containerd.io/gc.ref.content.l.${i}`] = l.digest));
  await w.client.contentWrite(`manifest-${digest}`, bytes, { expected: digest, lease: w.lease, labels });
  return { media_type: mediaType, digest, size: bytes.length };
}

export function danglingName(target: Descriptor): string {
  return `${DANGLING_PREFIX}${target.digest}`;
}

async function createOrUpdate(client: SupervisorClient, rec: ImageRecord): Promise<void> {
  try {
    await client.images.create(rec);
  } catch (err) {
    if (!(err instanceof EngineError && err.code === 'CONFLICT')) throw err;
    await client.images.update(rec, ['target', 'labels']);
  }
}

/** Keeps an image that is about to lose its last name reachable (and listed) as dangling. */
export async function keepAsDangling(client: SupervisorClient, img: LocalImage): Promise<void> {
  if (img.records.some((r) => isDanglingName(r.name))) return;
  await createOrUpdate(client, { name: danglingName(img.record.target), labels: { ...img.record.labels }, target: img.record.target });
}

export interface NamedResult {
  /** The image that had this name before, when it was another one. */
  replaced?: LocalImage;
}

/**
 * Points `name` at `target`. An image that loses its last name this way stays as a dangling
 * image (dockerd keeps it too); the new image's own dangling record goes once it has a name.
 */
export async function setName(
  client: SupervisorClient,
  images: ImageStore,
  name: string,
  target: Descriptor,
  labels: Record<string, string>,
): Promise<NamedResult> {
  const result: NamedResult = {};
  let previous: ImageRecord | undefined;
  try {
    previous = await client.images.get(name);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  if (previous && previous.target.digest !== target.digest) {
    const all = await images.list();
    const old = all.find((i) => i.records.some((r) => r.name === name));
    if (old) {
      if (old.records.length === 1) await keepAsDangling(client, old);
      result.replaced = old;
    }
  }
  await createOrUpdate(client, { name, labels, target });
  await client.images.delete(danglingName(target)).catch(() => undefined); // The image may never have had a dangling name: nothing to remove.
  return result;
}

/** Gives a nameless new image its dangling record (unless it is already reachable by a name). */
export async function ensureReachable(
  client: SupervisorClient,
  images: ImageStore,
  target: Descriptor,
  labels: Record<string, string>,
  configDigest: string,
): Promise<void> {
  const existing = (await images.list()).find((i) => i.id === configDigest);
  if (existing && existing.records.length) return;
  await createOrUpdate(client, { name: danglingName(target), labels, target });
}
