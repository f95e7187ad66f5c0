// The fast path of `docker commit` on overlayfs: the container's upper directory (its changes over
// the init layer, i.e. over the image) is read twice at once, with nothing read back: as a tar
// streamed and hashed into a file beside containerd's blobs (overlay-diff.ts, storeNewBlob), and
// copied as is (`cp -a`: whiteout devices, opaque xattrs, hard links kept) into the upper directory
// of a new snapshot on the image's top, which is then committed under the new chain ID. Applying
// the tar onto the image's top would give the same tree: overlay's markers mean what the tar's
// whiteouts mean. No containerd diff or apply (each a full read plus a hash of the layer).
import { randomBytes } from 'node:crypto';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { EngineError } from '../errors.ts';
import type { Descriptor, Mount } from '../supervisor/types.ts';
import { runCommand } from '../util/helper-shell.ts';
import { storeNewBlob } from './distribution/blob-writer.ts';
import { chainIds } from './image-store.ts';
import { MT, type WriteContext } from './image-write.ts';
import { TarWriter } from '../util/tar-writer.ts';
import {
  NotFastPathable,
  readUpperXattrs,
  readXattrsOf,
  upperDirOf,
  writeChangesTar,
  writeUpperTar,
  xattrsFastPathable,
} from './overlay-diff.ts';
import { CHANGE_DELETE, treeChanges } from './tree-diff.ts';
import { readOnlyMounts, withMounted } from '../supervisor/mounts.ts';

/**
 * The layer blob of an overlay upper directory that nothing writes to any more (lexical order,
 * whiteouts and opaque directories translated), written and hashed once into the content store;
 * null where the walk would not be exact (getfattr missing, overlay markers it misreads, binary
 * xattrs): the caller then uses the diff service. Used by commit and by the builder's COPY/ADD/WORKDIR.
 */
export async function layerFromUpper(
  w: WriteContext & { contentRoot: string },
  upper: string,
  ref: string,
  xattrs?: Map<string, Map<string, Buffer>> | null,
): Promise<Descriptor | null> {
  const x = xattrs === undefined ? await readUpperXattrs(upper) : xattrs;
  if (!x || !xattrsFastPathable(x)) return null;
  try {
    const blob = await storeNewBlob({ client: w.client, lease: w.lease, contentRoot: w.contentRoot }, ref, (sink) =>
      writeUpperTar(upper, x, new TarWriter(sink)),
    );
    return { media_type: MT.ociLayer, digest: blob.digest, size: blob.size };
  } catch (err) {
    if (err instanceof NotFastPathable) return null;
    throw err;
  }
}

export interface FastCommit {
  /** The new layer blob (uncompressed: its digest is its diff ID). */
  layer: Descriptor;
  /** The chain ID of the new top snapshot, committed. */
  top: string;
}

/**
 * The container's layer as a blob plus the image's new top snapshot, or null where the fast path
 * does not apply (not overlay, overlay features a plain walk misreads, no content root): the
 * caller then diffs and unpacks through containerd. Only the upper directory is read.
 */
export async function commitFromUpper(
  w: WriteContext,
  contentRoot: string | undefined,
  container: { snapshotKey: string; snapshotter: string; id: string },
  parentDiffIds: string[],
): Promise<FastCommit | null> {
  if (!contentRoot || container.snapshotter !== w.snapshotter) return null;
  const upper = upperDirOf(await w.client.snapshots.mounts(container.snapshotKey, { snapshotter: container.snapshotter }));
  if (!upper) return null;
  const parentTop = chainIds(parentDiffIds).at(-1);
  if (!parentTop) return null; // an image without layers: the new snapshot would be a bind mount
  const key = `extract-${randomBytes(6).toString('hex')}-commit`;
  const opts = { snapshotter: w.snapshotter, lease: w.lease };
  // The xattrs (one getfattr) and the new snapshot are got at once; a refusal drops the snapshot.
  const [xattrs, mounts] = await Promise.all([
    readUpperXattrs(upper),
    w.client.snapshots.prepare({ key, parent: parentTop, snapshotter: w.snapshotter }, { lease: w.lease }),
  ]);
  const target = upperDirOf(mounts);
  let committed = false;
  try {
    if (!target || !xattrs || !xattrsFastPathable(xattrs)) return null;
    const ref = `commit-${container.id.slice(0, 12)}-${randomBytes(6).toString('hex')}`;
    const names = await readdir(upper);
    const [layer] = await Promise.all([
      layerFromUpper({ ...w, contentRoot }, upper, ref, xattrs),
      names.length ? runCommand('cp', ['-a', '--', ...names.map((n) => join(upper, n)), `${target}/`], { timeoutMs: 600_000 }) : undefined,
    ]);
    if (!layer) return null;
    const top = chainIds([...parentDiffIds, layer.digest]).at(-1)!;
    try {
      await w.client.snapshots.commit({ name: top, key, snapshotter: w.snapshotter }, { lease: w.lease });
      committed = true;
    } catch (err) {
      // The same changes committed before: that snapshot is this one's twin.
      if (!(err instanceof EngineError && err.code === 'CONFLICT')) throw err;
    }
    return { layer, top };
  } finally {
    // Under the commit's lease anyway; removing it at once only frees the copy early.
    if (!committed)
      await w.client.snapshots.remove(key, opts).catch((e: Error) => w.log?.debug(`commit: snapshot ${key} not removed: ${e.message}`));
  }
}

/**
 * The container's layer from a comparison of its tree with the one below it (snapshotters without
 * an upper directory: btrfs), metadata only as dockerd's naive diff (tree-diff.ts), written and
 * hashed once into the content store; containerd's walking differ would read every unchanged file
 * of the image whose mtime has whole seconds. Throws where that is not exact (getfattr missing,
 * binary xattrs), saying why: the caller then uses the diff service. The caller applies the blob
 * (small: the changes only) onto the image's top.
 */
export async function layerFromTrees(
  w: WriteContext & { contentRoot: string },
  tmpDir: string,
  container: { snapshotKey: string; snapshotter: string; id: string },
): Promise<Descriptor> {
  const { client, lease } = w;
  const snapshotter = container.snapshotter;
  const info = await client.snapshots.stat(container.snapshotKey, { snapshotter });
  const viewKey = `commit-view-${randomBytes(6).toString('hex')}`;
  const lower = await client.snapshots.view({ key: viewKey, parent: info.parent, snapshotter }, { lease });
  try {
    const upper = readOnlyMounts(await client.snapshots.mounts(container.snapshotKey, { snapshotter }));
    return await layerFromMountedTrees(w, tmpDir, lower, upper, `commit-${container.id.slice(0, 12)}-${viewKey.slice(12)}`);
  } finally {
    // The view holds no data of its own, and the lease containerd expires takes it.
    await client.snapshots
      .remove(viewKey, { snapshotter, lease })
      .catch((e: Error) => w.log?.debug(`commit: view ${viewKey} not removed: ${e.message}`));
  }
}

/** The layer between two trees given as mounts (mounted here, read-only), as layerFromTrees; throws where not exact. */
export async function layerFromMountedTrees(
  w: WriteContext & { contentRoot: string },
  tmpDir: string,
  lower: Mount[],
  upper: Mount[],
  ref: string,
): Promise<Descriptor> {
  try {
    return await withMounted(lower, tmpDir, (oldRoot) =>
      withMounted(upper, tmpDir, async (newRoot) => {
        const changes = await treeChanges(oldRoot, newRoot);
        const xattrs = await readXattrsOf(changes.filter((c) => c.Kind !== CHANGE_DELETE).map((c) => join(newRoot, c.Path)));
        if (!xattrs) throw new NotFastPathable('getfattr could not read the changed paths');
        if (!xattrsFastPathable(xattrs)) throw new NotFastPathable('an xattr the tar cannot carry');
        const blob = await storeNewBlob({ client: w.client, lease: w.lease, contentRoot: w.contentRoot }, ref, (sink) =>
          writeChangesTar(newRoot, changes, xattrs, new TarWriter(sink)),
        );
        return { media_type: MT.ociLayer, digest: blob.digest, size: blob.size };
      }),
    );
  } catch (err) {
    // Not exact this way (the caller logs why and uses the diff service).
    if (err instanceof NotFastPathable) throw new Error(`the tree comparison is not exact here: ${err.message}`);
    throw err;
  }
}
