// Unpacking a layer while it downloads: the compressed bytes on their way to the content store are
// also gunzipped (zlib, on libuv's thread pool: several layers decompress at once), hashed (the
// diffID) and extracted into a staging directory beside containerd's stores. Once its parent
// snapshot is committed, the pull prepares the layer's snapshot and renames the staged tree onto
// its empty upper directory (overlayfs: the layer's own files are all the upper holds), so no layer
// is read back from the content store and layers do not unpack one after the other through the
// diff service. Only what this extractor reproduces exactly like containerd's applier (with its
// overlay whiteout conversion) is staged: directories, regular files, symlinks, hard links within
// the layer, with owners, modes and mtimes; whiteouts as 0:0 character devices and opaque
// directories as `trusted.overlay.opaque=y` (made by mknod and setfattr), text xattrs. Binary
// xattrs, devices, fifos, sparse files and entries whose parent directory the layer does not carry
// make the stage give up; that layer then goes through containerd's diff service (the download
// itself never fails because of the stage). An entry leading out of the layer refuses the layer.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { closeSync, fchmodSync, fchownSync, futimesSync, openSync, writeSync } from 'node:fs';
import { chmod, chown, lchown, link, lutimes, mkdir, mkdtemp, readdir, rm, symlink, utimes } from 'node:fs/promises';
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

const WH_PREFIX = '.wh.';
const WH_OPAQUE = '.wh..wh..opq';

/** What Node cannot make itself, made at the end of the layer by mknod and setfattr (Debian's attr). */
interface OverlayMarks {
  /** Whiteout path → its owner `uid:gid`. */
  whiteouts: Map<string, string>;
  /** [path, name, value] */
  xattrs: Array<[string, string, Buffer]>;
}

function runTool(cmd: string, args: string[], cwd: string, input?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = execFile(cmd, args, { cwd }, (err, _out, stderr) =>
      err ? reject(new GiveUp(`${cmd}: ${String(stderr).trim() || err.message}`)) : resolve(),
    );
    if (input !== undefined) p.stdin!.end(input);
  });
}

/** Whiteouts (one shell for all) and xattrs (one setfattr --restore for all), relative to `dir`. */
async function applyMarks(dir: string, m: OverlayMarks): Promise<void> {
  const pairs = [...m.whiteouts].flatMap(([path, owner]) => [`./${path}`, owner]);
  for (let i = 0; i < pairs.length; i += 2000) {
    const script = 'while [ $# -gt 0 ]; do mknod -m 0 "$1" c 0 0 && chown -h "$2" "$1" || exit 1; shift 2; done';
    await runTool('sh', ['-c', script, 'sh', ...pairs.slice(i, i + 2000)], dir);
  }
  if (m.xattrs.length) {
    const dump = m.xattrs.map(([p, name, v]) => `# file: ${p}\n${name}=0x${v.toString('hex')}\n`).join('\n');
    await runTool('setfattr', ['-h', '--restore=-'], dir, dump);
  }
}

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
  /** `consumed` callbacks of chunks the input still holds. */
  private readonly unconsumed = new Set<() => void>();
  private readonly done: Promise<string | null>;

  private constructor(
    readonly dir: string,
    gzip: boolean,
  ) {
    // zlib hands stream options on to its Transform.
    const buffered = { writableHighWaterMark: BUFFERED } as ZlibOptions;
    this.input = gzip ? createGunzip({ chunkSize: 256 * 1024, ...buffered }) : new PassThrough({ writableHighWaterMark: BUFFERED });
    this.input.on('error', (err) => (this.failed ??= err));
    // Chunks still held when the stream closes (destroyed after a failure) are released then.
    this.input.on('close', () => {
      for (const c of this.unconsumed) c();
      this.unconsumed.clear();
    });
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

  /**
   * Feeds the next compressed chunk; never throws (a failed stage just stops taking data).
   * `consumed` runs once the stage no longer needs the chunk's bytes (at once when it failed).
   */
  async push(chunk: Buffer, consumed: () => void = () => undefined): Promise<void> {
    if (this.failed || this.input.destroyed) return consumed();
    this.unconsumed.add(consumed);
    const ok = this.input.write(chunk, () => {
      if (this.unconsumed.delete(consumed)) consumed();
    });
    if (ok) return;
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
    const marks: OverlayMarks = { whiteouts: new Map(), xattrs: [] };
    for await (const { header: h, body } of readTar(tapped())) {
      if (escapesRoot(h.name) || (h.kind === 'link' && escapesRoot(h.linkname)))
        throw new LayerRefused(`invalid tar archive: ${JSON.stringify(h.kind === 'link' ? h.linkname : h.name)} is outside of the layer`);
      const rel = guard.check(h);
      const parent = posix.dirname(rel) === '.' ? '' : posix.dirname(rel);
      if (rel !== '' && !dirs.has(parent)) throw new GiveUp('parent not in the layer');
      const base = posix.basename(rel);
      if (base === WH_OPAQUE) {
        // containerd's OverlayConvertWhiteout: the directory marked opaque, the entry not written.
        if (/[\n\\]/.test(parent)) throw new GiveUp('opaque directory name');
        marks.xattrs.push([parent || '.', 'trusted.overlay.opaque', Buffer.from('y')]);
        continue;
      }
      if (base.startsWith(WH_PREFIX)) {
        // …and a 0:0 character device (mode 0) owned as the whiteout entry, in its place.
        const target = posix.join(parent, base.slice(WH_PREFIX.length));
        if (seen.has(target) || marks.whiteouts.has(target)) throw new GiveUp('whiteout of something in the layer');
        marks.whiteouts.set(target, `${h.uid}:${h.gid}`);
        continue;
      }
      if (marks.whiteouts.has(rel)) throw new GiveUp('entry over a whiteout');
      for (const [k, v] of Object.entries(h.pax)) {
        if (!k.startsWith('SCHILY.xattr.') || rel === '') continue;
        // PAX values come decoded as UTF-8: a binary one (a capability set) is not reproduced exactly.
        if (v.includes('\uFFFD') || h.kind === 'link' || /[\n\\]/.test(rel)) throw new GiveUp('xattrs');
        marks.xattrs.push([rel, k.slice('SCHILY.xattr.'.length), Buffer.from(v, 'utf8')]);
      }
      const abs = rel === '' ? this.dir : join(this.dir, rel);
      if (seen.has(rel) && h.kind !== 'directory') {
        await rm(abs, { recursive: true, force: true });
        dirs.delete(rel);
      }
      seen.add(rel);
      await this.entry(h, rel, abs, body, seen, dirs, dirTimes);
    }
    await applyMarks(this.dir, marks);
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
        // Synchronous: this runs on a stage worker (stage-worker.ts), whose thread has nothing else
        // to do meanwhile; a write handed to libuv's pool costs two thread switches per chunk.
        const fd = openSync(abs, 'wx', 0o600);
        try {
          for await (const c of body) {
            for (let off = 0; off < c.length;) off += writeSync(fd, c, off, c.length - off);
          }
          fchownSync(fd, h.uid, h.gid);
          fchmodSync(fd, mode); // after chown, which clears set-id bits
          futimesSync(fd, h.mtime, h.mtime);
        } finally {
          closeSync(fd);
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
