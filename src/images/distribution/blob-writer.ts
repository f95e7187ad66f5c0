// Getting a downloaded blob into containerd's content store. The API way, Content.Write, streams
// every byte through gRPC and costs containerd more CPU than the download itself (~80 MB/s here,
// notes §3). When the daemon runs its own containerd it knows the content store's directory, and
// containerd 1.6's default "shared" content policy makes a blob that is already in the backend
// store registrable with a bare COMMIT. So: stream the download to a file beside the blobs (hashed
// and size-checked in Node), hard-link it to blobs/sha256/<hex>, then Content.Write with the
// expected digest finds it there and only commits it (labels, lease). If containerd does not find
// it (another sharing policy, a GC pass removed it in between), the same file is streamed through
// Content.Write instead. Without a known content root everything goes through Content.Write.
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { link, mkdir, open, readdir, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { SupervisorClient } from '../../supervisor/client.ts';
import { dropPageCache } from './page-cache.ts';

export interface BlobTarget {
  client: SupervisorClient;
  lease: string;
  /** containerd's io.containerd.content.v1.content directory, when the daemon manages containerd. */
  contentRoot?: string;
}

export const TMP_PREFIX = '.engine-ingest-';

export class BlobVerificationError extends Error {}

/** Removes temporary files a killed daemon left beside the blobs. */
export async function cleanIngestLeftovers(contentRoot: string): Promise<void> {
  const dir = join(contentRoot, 'blobs', 'sha256');
  let names: string[];
  try {
    names = await readdir(dir);
  } catch {
    // No blob directory yet (a fresh content store): nothing left over.
    return;
  }
  await Promise.all(names.filter((n) => n.startsWith(TMP_PREFIX)).map((n) => unlink(join(dir, n)).catch(() => undefined))); // ENOENT (another start swept it) or EACCES: stale temporary files are tidying, not correctness.
}

/**
 * Stores `source` as the blob `digest` of `size` bytes; rejects (storing nothing) when the bytes do
 * not match. `onEnd` runs once all bytes are in and verified, before the commit.
 */
export async function writeBlob(
  t: BlobTarget,
  ref: string,
  digest: string,
  size: number,
  source: AsyncIterable<Buffer>,
  labels: Record<string, string>,
  onEnd?: () => void,
): Promise<void> {
  if (!t.contentRoot || !digest.startsWith('sha256:')) {
    await t.client.contentWrite(ref, source, { expected: digest, total: size, lease: t.lease, labels });
    onEnd?.();
    return;
  }
  const dir = join(t.contentRoot, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
  try {
    const hash = createHash('sha256');
    let n = 0;
    await pipeline(
      async function* () {
        for await (const chunk of source) {
          n += chunk.length;
          if (n > size) throw new BlobVerificationError(`blob ${digest}: more data than the ${size} bytes announced`);
          hash.update(chunk);
          yield chunk;
        }
      },
      // Not synced here: see the end (a 50 MB fsync mid-pull also flushes the layers being unpacked).
      createWriteStream(tmp, { highWaterMark: 1 << 20 }),
    );
    const got = `sha256:${hash.digest('hex')}`;
    if (n !== size) throw new BlobVerificationError(`blob ${digest}: got ${n} bytes, expected ${size}`);
    if (got !== digest) throw new BlobVerificationError(`filesystem layer verification failed for digest ${digest}`);
    onEnd?.();
    // Synced in the background, off the pull's critical path, as storeNewBlob's; dockerd does not
    // sync a downloaded layer at all, nor containerd an unpacked one.
    await registerBlob(t, tmp, join(dir, digest.slice('sha256:'.length)), { ref, digest, size, labels });
  } finally {
    await unlink(tmp).catch(() => undefined); // The temporary file of a failed write: the write's error is the one that matters.
  }
}

/**
 * Stores bytes whose digest is not known beforehand (a layer being written, e.g. by commit): the
 * producer hands its chunks to `sink`, which hashes them and writes them to a file beside the
 * blobs before it resolves (so a producer may reuse its buffer), small ones gathered into 1 MiB
 * writes; then registered like `writeBlob`'s. Needs the content root; answers digest and size.
 * Not synced before it answers (see below).
 */
export async function storeNewBlob(
  t: BlobTarget & { contentRoot: string },
  ref: string,
  produce: (sink: (chunk: Uint8Array) => Promise<void>) => Promise<void>,
  labels: Record<string, string> = {},
): Promise<{ digest: string; size: number }> {
  const dir = join(t.contentRoot, 'blobs', 'sha256');
  await mkdir(dir, { recursive: true });
  const tmp = join(dir, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
  const fh = await open(tmp, 'w');
  try {
    const hash = createHash('sha256');
    let size = 0;
    const staging = Buffer.allocUnsafe(1 << 20);
    let staged = 0;
    const writeAll = async (b: Uint8Array) => {
      for (let off = 0; off < b.length;) off += (await fh.write(b, off, b.length - off)).bytesWritten;
    };
    const flush = async () => {
      if (staged) await writeAll(staging.subarray(0, staged));
      staged = 0;
    };
    await produce(async (chunk) => {
      hash.update(chunk);
      size += chunk.length;
      if (chunk.length >= 64 * 1024) {
        await flush();
        await writeAll(chunk);
        return;
      }
      if (staged + chunk.length > staging.length) await flush();
      staging.set(chunk, staged);
      staged += chunk.length;
    });
    await flush();
    await fh.close();
    const digest = `sha256:${hash.digest('hex')}`;
    const blob = join(dir, digest.slice('sha256:'.length));
    // Synced in the background, off the request's latency (a 10 MiB fsync costs ~50 ms here);
    // dockerd does not sync a committed layer at all, nor containerd an unpacked one.
    await registerBlob(t, tmp, blob, { ref, digest, size, labels });
    return { digest, size };
  } finally {
    await fh.close().catch(() => undefined); // EBADF: already closed on success
    // The temporary file (the blob is its hard link now, or the write failed)
    await unlink(tmp).catch(() => undefined); // ENOENT: the blob is its hard link now; otherwise the write's error matters
  }
}

/**
 * A verified temporary file made a blob: hard-linked to its place in the content store (already
 * there: fine), registered with containerd (found in the backend: a bare COMMIT; else, after
 * another policy or a GC pass in between, streamed), then synced in the background.
 */
export async function registerBlob(
  t: BlobTarget,
  tmp: string,
  blob: string,
  w: { ref: string; digest: string; size: number; labels: Record<string, string> | undefined },
): Promise<void> {
  try {
    await link(tmp, blob);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  }
  await t.client.contentWrite(w.ref, createReadStream(tmp, { highWaterMark: 1 << 20 }), {
    expected: w.digest,
    total: w.size,
    lease: t.lease,
    labels: w.labels,
  });
  void syncLater(blob);
}

let syncs: Promise<void> = Promise.resolve();

/**
 * fdatasync of a committed blob, in the background; a failure only loses durability, never data.
 * Then its pages leave the page cache (page-cache.ts): the blob is cold once stored. One at a
 * time: each holds a thread of libuv's pool for as long as the disk takes (seconds for a 50 MB
 * layer on a busy disk), and the pull's own file writes go through that pool (pooled-writes.ts):
 * four layers' syncs at once held all four of its threads and the next layers' writes waited
 * behind them.
 */
function syncLater(path: string): Promise<void> {
  syncs = syncs.then(
    () =>
      open(path, 'r')
        .then((h) =>
          h
            .datasync()
            .then(() => void dropPageCache(h.fd))
            .finally(() => h.close()),
        )
        .catch(() => undefined), // EIO or ENOENT (removed meanwhile): a failed sync only loses durability
  );
  return syncs;
}

/** Once the background syncs (and page-cache drops) of the blobs stored so far are done. */
export function blobSyncsDone(): Promise<void> {
  return syncs;
}
