// `docker save`: images as an OCI image layout (oci-layout, index.json, blobs/sha256/…) plus the
// docker-save files (manifest.json, repositories) that older daemons load from. Blobs stream out of
// the content store; every name is resolved before the first byte is written.
import type { Writable } from 'node:stream';
import { notFound } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import { TarWriter } from '../util/tar-writer.ts';
import type { ImageStore, LocalImage } from './image-store.ts';
import { MT } from './image-write.ts';
import {
  familiarName,
  familiarString,
  isDanglingName,
  looksLikeImageId,
  parseReference,
  referenceString,
  repoName,
} from '../util/image-reference.ts';

interface SaveItem {
  image: LocalImage;
  /** Canonical tagged names to record for it (none when saved by ID). */
  names: string[];
}

/** Which images (and which of their names) the requested names mean, as dockerd resolves them. */
export async function resolveSaveNames(images: ImageStore, requested: string[]): Promise<SaveItem[]> {
  const all = await images.list();
  const items = new Map<string, SaveItem>();
  const add = (image: LocalImage, name?: string) => {
    const item = items.get(image.id) ?? { image, names: [] };
    if (name && !item.names.includes(name)) item.names.push(name);
    items.set(image.id, item);
  };
  for (const raw of requested) {
    let nameOnly: ReturnType<typeof parseReference> | undefined;
    if (!looksLikeImageId(raw)) {
      try {
        const r = parseReference(raw, { defaultTag: false });
        if (!r.tag && !r.digest) nameOnly = r;
      } catch {
        // not a reference: an ID prefix, or nothing
      }
    }
    if (nameOnly) {
      // A bare repository name saves every tag of it.
      const repo = repoName(nameOnly);
      let found = false;
      for (const img of all) {
        for (const n of img.names) {
          if (isDanglingName(n)) continue;
          const r = parseReference(n, { defaultTag: false });
          if (repoName(r) === repo && r.tag) {
            add(img, n);
            found = true;
          }
        }
      }
      if (found) continue;
    }
    const img = await images.resolve(raw);
    const full = all.find((i) => i.id === img.id) ?? img;
    let tagged: string | undefined;
    try {
      const r = parseReference(raw);
      if (r.tag && !r.digest && full.names.includes(referenceString(r))) tagged = referenceString(r);
    } catch {
      // not a reference (an image ID or ID prefix): saved by ID, untagged
    }
    add(full, tagged);
  }
  if (!items.size) throw notFound('No such image');
  return [...items.values()];
}

async function blobEntry(tw: TarWriter, client: SupervisorClient, digest: string, mtime: number): Promise<void> {
  const info = await client.contentInfo(digest);
  await tw.entry({ name: `blobs/sha256/${digest.slice(7)}`, size: Number(info.size), mode: 0o644, mtime }, client.contentRead(digest));
}

/** Writes the archive for the resolved items to `out` (not ended). */
export async function writeSaveArchive(client: SupervisorClient, items: SaveItem[], out: Writable): Promise<void> {
  const tw = new TarWriter(out);
  const mtime = Math.floor(Date.now() / 1000);
  const dir = { mode: 0o755, mtime };
  await tw.directory('blobs', dir);
  await tw.directory('blobs/sha256', dir);
  const written = new Set<string>();
  const index: unknown[] = [];
  const manifestJson: unknown[] = [];
  const repositories: Record<string, Record<string, string>> = {};
  for (const { image, names } of items) {
    for (const d of [...image.manifest.layers.map((l) => l.digest), image.manifest.config.digest]) {
      if (written.has(d)) continue;
      written.add(d);
      await blobEntry(tw, client, d, mtime);
    }
    const manifestBytes = await client.contentReadAll(image.manifestDigest);
    if (!written.has(image.manifestDigest)) {
      written.add(image.manifestDigest);
      await tw.file(`blobs/sha256/${image.manifestDigest.slice(7)}`, manifestBytes, { mode: 0o644, mtime });
    }
    const declared = (JSON.parse(manifestBytes.toString('utf8')) as { mediaType?: string }).mediaType;
    const mediaType = declared ?? (image.record.target.digest === image.manifestDigest ? image.record.target.media_type : MT.ociManifest);
    const desc = { mediaType, digest: image.manifestDigest, size: manifestBytes.length };
    if (names.length) {
      for (const n of names) {
        const r = parseReference(n);
        index.push({ ...desc, annotations: { 'io.containerd.image.name': n, 'org.opencontainers.image.ref.name': r.tag } });
        (repositories[familiarName(r)] ??= {})[r.tag!] = image.id.slice(7);
      }
    } else {
      index.push(desc);
    }
    manifestJson.push({
      Config: `blobs/sha256/${image.manifest.config.digest.slice(7)}`,
      RepoTags: names.length ? names.map((n) => familiarString(parseReference(n))) : null,
      Layers: image.manifest.layers.map((l) => `blobs/sha256/${l.digest.slice(7)}`),
    });
  }
  const file = (name: string, value: unknown) =>
    tw.file(name, JSON.stringify(value) + (name === 'manifest.json' ? '\n' : ''), { mode: 0o644, mtime });
  await file('index.json', { schemaVersion: 2, mediaType: MT.ociIndex, manifests: index });
  await file('manifest.json', manifestJson);
  await file('oci-layout', { imageLayoutVersion: '1.0.0' });
  if (Object.keys(repositories).length) await file('repositories', repositories);
  await tw.finish();
}
