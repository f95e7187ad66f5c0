// `docker import`: a rootfs tar (plain or compressed) becomes a one-layer image. The tar is checked
// entry by entry while it streams into the content store (uncompressed: its digest is the diff ID),
// then unpacked, and config, manifest and name are written — all under one lease.
import { nowIso } from '../util/time.ts';
import { createHash, randomBytes } from 'node:crypto';
import { invalidParameter } from '../errors.ts';
import type { SupervisorClient } from '../supervisor/client.ts';
import type { Descriptor } from '../supervisor/types.ts';
import { applyChanges } from './changes.ts';
import { decompressed } from './decompress.ts';
import type { ImageStore, OciImageConfig } from './image-store.ts';
import { ensureReachable, MT, setName, unpackLayers, writeConfig, writeManifest, type WriteContext } from './image-write.ts';
import { isValidTag, parseReference, referenceString, type Reference } from '../util/image-reference.ts';
import { TarParser, TarPathGuard } from './tar-reader.ts';

export interface ImportOptions {
  /** Repository, optionally with a tag (`repo:tag`); none leaves the image untagged. */
  repo?: string;
  tag?: string;
  /** Commit message stored in the history (default "Imported from -"). */
  message?: string;
  /** Dockerfile instructions (CMD, ENTRYPOINT, ENV, …) applied to the empty config. */
  changes?: string[];
  /** os[/arch[/variant]]; the host's by default. */
  platform?: string;
}

/** A JSON progress message as the docker CLI renders it. */
export interface ProgressMessage {
  status?: string;
  id?: string;
  progress?: string;
  progressDetail?: { current?: number; total?: number };
  stream?: string;
}
export type ProgressFn = (msg: ProgressMessage) => void;

export interface ImageDeps {
  client: SupervisorClient;
  images: ImageStore;
  snapshotter: string;
  platform?: { os: string; architecture: string };
  /** containerd's content directory when the daemon runs its own containerd (commit writes there). */
  contentRoot?: string;
}

/** The reference for repo + tag as dockerd's import and commit take them (digests refused). */
export function targetReference(repo: string | undefined, tag: string | undefined): Reference | undefined {
  if (!repo) {
    if (tag) throw invalidParameter('tag given without a repository');
    return undefined;
  }
  if (/^[a-f0-9]{64}$/.test(repo)) throw invalidParameter(`invalid repository name (${repo}), cannot specify 64-byte hexadecimal strings`);
  const ref = parseReference(repo, { defaultTag: false });
  if (ref.digest) throw invalidParameter('cannot import digest reference');
  if (tag) {
    if (!isValidTag(tag)) throw invalidParameter(`invalid tag format: ${JSON.stringify(tag)}`);
    ref.tag = tag;
  }
  ref.tag ??= 'latest';
  return ref;
}

export function parsePlatform(
  p: string | undefined,
  host: { os: string; architecture: string },
): { os: string; architecture: string; variant?: string } {
  if (!p) return { ...host };
  const [os, architecture, variant] = p.split('/');
  if (!os || p.split('/').length > 3) throw invalidParameter(`invalid platform ${JSON.stringify(p)}`);
  return { os: os.toLowerCase(), architecture: (architecture || host.architecture).toLowerCase(), ...(variant ? { variant } : {}) };
}

/**
 * Streams the (decompressed) archive into the content store as an uncompressed layer, refusing
 * entries that would leave the root. Returns the layer descriptor (its digest is the diff ID).
 */
export async function storeLayerTar(client: SupervisorClient, source: AsyncIterable<Uint8Array>, lease: string): Promise<Descriptor> {
  const hash = createHash('sha256');
  const guard = new TarPathGuard({ absoluteSymlinks: true });
  let entries = 0;
  const parser = new TarParser({
    entry: (h) => {
      guard.check(h);
      entries++;
    },
    data: () => undefined,
    entryEnd: () => undefined,
  });
  let bytes = 0;
  async function* checked(): AsyncGenerator<Buffer> {
    for await (const chunk of decompressed(source)) {
      parser.push(chunk);
      hash.update(chunk);
      bytes += chunk.length;
      yield chunk;
    }
    parser.end();
    if (!entries) throw invalidParameter('invalid tar archive: no entries (empty or not a tar archive)');
  }
  const ref = `import-${randomBytes(8).toString('hex')}`;
  const written = await client.contentWrite(ref, checked(), { lease }).catch(async (err) => {
    await client.contentAbort(ref, { lease }).catch(() => undefined); // The import already failed (reported); an unfinished write expires with its lease.
    throw err;
  });
  const digest = `sha256:${hash.digest('hex')}`;
  if (written.digest !== digest) throw invalidParameter(`layer digest mismatch: stored ${written.digest}, read ${digest}`);
  return { media_type: MT.ociLayer, digest, size: bytes };
}

/**
 * Imports a rootfs tar. Nothing is written to `progress` (dockerd reports nothing for a body
 * import either), so a refused archive can still be answered with a 400 status; the caller writes
 * the final {"status": id} line.
 */
export async function importImage(
  deps: ImageDeps,
  source: AsyncIterable<Uint8Array>,
  opts: ImportOptions = {},
  _progress?: ProgressFn,
): Promise<{ id: string; name?: string }> {
  const ref = targetReference(opts.repo, opts.tag);
  const platform = parsePlatform(opts.platform, deps.platform ?? { os: 'linux', architecture: 'amd64' });
  const runtime = applyChanges({}, opts.changes ?? []);
  const { client } = deps;
  return client.withLease(async (lease) => {
    const w: WriteContext = { client, snapshotter: deps.snapshotter, lease };
    const layer = await storeLayerTar(client, source, lease);
    const top = await unpackLayers(w, [layer], [layer.digest]);
    const created = nowIso();
    const config: OciImageConfig & { variant?: string } = {
      architecture: platform.architecture,
      os: platform.os,
      ...(platform.variant ? { variant: platform.variant } : {}),
      created,
      config: runtime,
      rootfs: { type: 'layers', diff_ids: [layer.digest] },
      history: [{ created, comment: opts.message || 'Imported from -' }],
    };
    const configDesc = await writeConfig(w, Buffer.from(JSON.stringify(config)), top);
    const manifest = await writeManifest(w, { config: configDesc, layers: [layer] });
    const id = configDesc.digest;
    if (ref) {
      await setName(client, deps.images, referenceString(ref), manifest, {});
    } else {
      await ensureReachable(client, deps.images, manifest, {}, id);
    }
    await deps.images.list().catch(() => undefined); // refreshes the count /info shows; a failed listing (containerd busy) only leaves it stale until the next
    return { id, ...(ref ? { name: referenceString(ref) } : {}) };
  });
}
