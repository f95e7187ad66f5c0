// Unpacking a layer while it downloads: the compressed bytes on their way to the content store are
// also gunzipped (zlib, on libuv's thread pool: several layers decompress at once), hashed (the
// diffID) and extracted into a staging directory beside containerd's stores. Once its parent
// snapshot is committed, the pull prepares the layer's snapshot and renames the staged tree onto
// its empty upper directory (overlayfs: the layer's own files are all the upper holds), so no layer
// is read back from the content store and layers do not unpack one after the other through the
// diff service. Only what this extractor reproduces exactly like containerd's applier is staged:
// directories, regular files, symlinks, hard links within the layer, with owners, modes and
// mtimes. Whiteouts, opaque directories, xattrs, devices, fifos, sparse files and entries whose
// parent directory the layer does not carry make the stage give up; that layer then goes through
// containerd's diff service as before (the download itself never fails because of the stage).
import { createHash } from 'node:crypto';
import { chmod, chown, lchown, link, lutimes, mkdir, mkdtemp, open, readdir, rm, symlink, utimes } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { PassThrough, type Transform } from 'node:stream';
import { createGunzip, type ZlibOptions } from 'node:zlib';
import { readTar, safeEntryPath, TarPathGuard, type TarHeader } from '../tar-reader.ts';

const STAGE_PREFIX = '.engine-unpack-';
/** Compressed bytes a stage may hold before the download waits for it: downloads do not wait on disk writes chunk by chunk. */
const BUFFERED = 8 << 20;

/** The media types staged: gzip-compressed and plain tar layers. */
export function stageable(mediaType: string): boolean {
  return /^application\/vnd\.(oci\.image\.layer\.v1\.tar(\+gzip)?|docker\.image\.rootfs\.diff\.tar(\.gzip)?)$/.test(mediaType);
}

/** Removes staging directories a killed daemon left behind. */
export async function cleanStageLeftovers(stageRoot: string): Promise<void> {
  const names = await readdir(stageRoot).catch(() => [] as string[]);
  // Stale staging trees of an earlier run: removing them is tidying, not correctness.
  await Promise.all(
    names.filter((n) => n.startsWith(STAGE_PREFIX)).map((n) => rm(join(stageRoot, n), { recursive: true, force: true }).catch(() => {})),
  );
}

/** A layer unpacked beside the snapshots: its tree and the sha256 of its uncompressed tar. */
export interface StagedLayer {
  dir: string;
  diffId: string;
}

class GiveUp extends Error {}

/** An entry that leads out of the layer (`../x`): the layer is refused, as dockerd refuses it. */
export class LayerRefused extends Error {}

/** Whether a tar entry name leads out of the root once cleaned (dockerd's breakout check). */
export function escapesRoot(name: string): boolean {
  const norm = posix.normalize(name.replace(/^\/+/, ''));
  return norm === '..' || norm.startsWith('../');
}

export class LayerStage {
  private readonly input: Transform;
  private failed: Error | null = null;
  private readonly done: Promise<string | null>;

  private constructor(
    readonly dir: string,
    gzip: boolean,
  ) {
    // zlib hands stream options on to its Transform.
    const buffered = { writableHighWaterMark: BUFFERED } as ZlibOptions;
    this.input = gzip ? createGunzip({ chunkSize: 256 * 1024, ...buffered }) : new PassThrough({ writableHighWaterMark: BUFFERED });
    this.input.on('error', (err) => (this.failed ??= err));
    this.done = this.extract().catch((err: Error) => {
      this.failed ??= err;
      this.input.destroy();
      return null;
    });
  }

  static async start(stageRoot: string, mediaType: string): Promise<LayerStage> {
    const dir = await mkdtemp(join(stageRoot, STAGE_PREFIX));
    await chmod(dir, 0o755); // the upper directory containerd would have made
    return new LayerStage(dir, /gzip$/.test(mediaType));
  }

  /** Feeds the next compressed chunk; never throws (a failed stage just stops taking data). */
  async push(chunk: Buffer): Promise<void> {
    if (this.failed || this.input.destroyed) return;
    if (this.input.write(chunk)) return;
    const input = this.input;
    await new Promise<void>((resolve) => {
      const done = () => {
        input.off('drain', done);
        input.off('close', done);
        resolve();
      };
      input.on('drain', done);
      input.on('close', done);
    });
  }

  /** After the last chunk: the staged layer, or null (with the reason) when the diff service must do it. */
  async finish(): Promise<{ layer: StagedLayer | null; reason?: string; refused?: boolean }> {
    if (!this.input.destroyed) this.input.end();
    const diffId = await this.done;
    if (!diffId || this.failed) {
      const refused = this.failed instanceof LayerRefused;
      await this.discard();
      return { layer: null, reason: this.failed?.message ?? 'not staged', ...(refused ? { refused } : {}) };
    }
    return { layer: { dir: this.dir, diffId } };
  }

  async discard(): Promise<void> {
    this.failed ??= new Error('discarded');
    this.input.destroy();
    await this.done;
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined);
  }

  private async extract(): Promise<string> {
    const hash = createHash('sha256');
    const input = this.input;
    async function* tapped(): AsyncGenerator<Buffer> {
      for await (const c of input as AsyncIterable<Buffer>) {
        hash.update(c);
        yield c;
      }
    }
    const guard = new TarPathGuard({ absoluteSymlinks: true });
    const dirs = new Set<string>(['']); // directories this layer made (their parents exist)
    const seen = new Set<string>(); // every path written
    const dirTimes: Array<[string, number]> = [];
    for await (const { header: h, body } of readTar(tapped())) {
      if (escapesRoot(h.name) || (h.kind === 'link' && escapesRoot(h.linkname)))
        throw new LayerRefused(`invalid tar archive: ${JSON.stringify(h.kind === 'link' ? h.linkname : h.name)} is outside of the layer`);
      const rel = guard.check(h);
      if (posix.basename(rel).startsWith('.wh.')) throw new GiveUp('whiteout');
      if (Object.keys(h.pax).some((k) => /xattr\./i.test(k))) throw new GiveUp('xattrs');
      if (rel !== '' && !dirs.has(posix.dirname(rel) === '.' ? '' : posix.dirname(rel))) throw new GiveUp('parent not in the layer');
      const abs = rel === '' ? this.dir : join(this.dir, rel);
      if (seen.has(rel) && h.kind !== 'directory') {
        await rm(abs, { recursive: true, force: true });
        dirs.delete(rel);
      }
      seen.add(rel);
      await this.entry(h, rel, abs, body, seen, dirs, dirTimes);
    }
    // Directory times last: creating their children changed them.
    for (let i = dirTimes.length - 1; i >= 0; i--) await utimes(dirTimes[i]![0], dirTimes[i]![1], dirTimes[i]![1]);
    if (this.failed) throw this.failed;
    return `sha256:${hash.digest('hex')}`;
  }

  private async entry(
    h: TarHeader,
    rel: string,
    abs: string,
    body: AsyncIterable<Buffer>,
    seen: Set<string>,
    dirs: Set<string>,
    dirTimes: Array<[string, number]>,
  ): Promise<void> {
    const mode = h.mode & 0o7777;
    switch (h.kind) {
      case 'directory': {
        if (rel === '') return; // containerd's applier leaves the layer's root as the snapshot made it
        if (!dirs.has(rel)) {
          await rm(abs, { recursive: true, force: true }); // a file of the same name earlier in the layer
          await mkdir(abs);
          dirs.add(rel);
        }
        await chown(abs, h.uid, h.gid);
        await chmod(abs, mode);
        dirTimes.push([abs, h.mtime]);
        return;
      }
      case 'file': {
        const fh = await open(abs, 'wx', 0o600);
        try {
          for await (const c of body) {
            for (let off = 0; off < c.length;) off += (await fh.write(c, off, c.length - off)).bytesWritten;
          }
          await fh.chown(h.uid, h.gid);
          await fh.chmod(mode); // after chown, which clears set-id bits
          await fh.utimes(h.mtime, h.mtime);
        } finally {
          await fh.close();
        }
        return;
      }
      case 'symlink':
        await symlink(h.linkname, abs);
        await lchown(abs, h.uid, h.gid);
        await lutimes(abs, h.mtime, h.mtime);
        return;
      case 'link': {
        const target = safeEntryPath(h.linkname);
        if (!seen.has(target) || dirs.has(target) || target === rel) throw new GiveUp('hard link to something outside the layer');
        await link(join(this.dir, target), abs);
        // As containerd's applier: the link entry's owner, mode and time go to the shared inode.
        await chown(abs, h.uid, h.gid);
        await chmod(abs, mode);
        await utimes(abs, h.mtime, h.mtime);
        return;
      }
      default:
        throw new GiveUp(`${h.kind} entry`);
    }
  }
}
