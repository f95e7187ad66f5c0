// Unpacking a layer while it downloads: the compressed bytes on their way to the content store are
// also gunzipped, hashed (the diffID) and extracted into a staging directory beside containerd's
// stores, chunk by chunk and synchronously on the stage worker's thread (stage-worker.ts; each
// layer has its own, so layers decompress at once; sync-gunzip.ts). Once its parent
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
import { linkSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { chmod, mkdtemp, readdir, rm } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { safeEntryPath, TarParser, TarPathGuard, type TarHeader } from '../../tar-reader.ts';
import { applyEntryMeta, DirTimes } from '../../tar-disk.ts';
import { SyncGunzip } from './sync-gunzip.ts';
import type { WriteBuffers } from './pooled-writes.ts';
import { StagedFiles } from './stage-files.ts';

const STAGE_PREFIX = '.engine-unpack-';

/** The media types staged: gzip-compressed and plain tar layers. */
export function stageable(mediaType: string): boolean {
  return /^application\/vnd\.(oci\.image\.layer\.v1\.tar(\+gzip)?|docker\.image\.rootfs\.diff\.tar(\.gzip)?)$/.test(mediaType);
}

/** Removes staging directories a killed daemon left behind. */
export async function cleanStageLeftovers(stageRoot: string): Promise<void> {
  const names = await readdir(stageRoot).catch(() => [] as string[]); // ENOENT: no staging root yet, nothing left over
  // Stale staging trees of an earlier run: removing them is tidying, not correctness.
  await Promise.all(
    names.filter((n) => n.startsWith(STAGE_PREFIX)).map((n) => rm(join(stageRoot, n), { recursive: true, force: true }).catch(() => {})), // tidying, as above: one left now goes at the next start
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
  private failed: Error | null = null;
  private readonly hash = createHash('sha256');
  private readonly parser: TarParser;
  private readonly guard = new TarPathGuard({ absoluteSymlinks: true });
  /** Directories this layer made (their parents exist). */
  private readonly dirs = new Set<string>(['']);
  /** Every path written. */
  private readonly seen = new Set<string>();
  private readonly dirTimes = new DirTimes();
  private readonly marks: OverlayMarks = { whiteouts: new Map(), xattrs: [] };
  /** The regular files' writing. */
  private readonly files: StagedFiles;

  private constructor(
    readonly dir: string,
    private readonly gunzip: SyncGunzip | null,
    writes: WriteBuffers | null,
  ) {
    this.files = new StagedFiles(
      writes,
      (err) => this.fail(err),
      () => this.failed !== null,
    );
    this.parser = new TarParser({ entry: (h) => this.entry(h), data: (c) => this.data(c), entryEnd: () => this.entryEnd() });
  }

  /** `writes`: the files' bytes written on libuv's pool out of these buffers (pooled-writes.ts), else synchronously. */
  static async start(stageRoot: string, mediaType: string, writes: WriteBuffers | null = null): Promise<LayerStage> {
    const gzip = /gzip$/.test(mediaType);
    const gunzip = gzip ? SyncGunzip.create() : null;
    if (gzip && !gunzip) throw new GiveUp("this Node's zlib has no synchronous handle");
    try {
      const dir = await mkdtemp(join(stageRoot, STAGE_PREFIX));
      await chmod(dir, 0o755); // the upper directory containerd would have made
      return new LayerStage(dir, gunzip, writes);
    } catch (err) {
      gunzip?.close();
      throw err;
    }
  }

  /**
   * Takes the next compressed chunk, all of it at once (inflated, hashed, extracted before it
   * returns: the caller may reuse the chunk). Never throws: a failed stage stops taking data.
   */
  push(chunk: Buffer): void {
    if (this.failed) return;
    try {
      if (this.gunzip) this.gunzip.write(chunk, false, this.tar);
      else this.tar(chunk);
    } catch (err) {
      this.fail(err as Error);
    }
  }

  /** Uncompressed bytes: the diffID's hash and the tar parser, whose sink writes them out. */
  private readonly tar = (b: Buffer): void => {
    this.hash.update(b);
    this.parser.push(b);
  };

  private fail(err: Error): void {
    this.failed ??= err;
    this.files.abort();
  }

  /** After the last chunk: the staged layer, or null (with the reason) when the diff service must do it. */
  async finish(): Promise<{ layer: StagedLayer | null; reason?: string; refused?: boolean }> {
    if (!this.failed) {
      try {
        this.gunzip?.write(Buffer.alloc(0), true, this.tar); // a stream cut short throws here
        this.parser.end();
        await this.files.drained();
        await applyMarks(this.dir, this.marks);
        this.dirTimes.apply(); // last: creating their children changed them
      } catch (err) {
        this.fail(err as Error);
      }
    }
    this.gunzip?.close();
    await this.files.drained(); // a write that failed: the others' end
    if (this.failed) {
      const refused = this.failed instanceof LayerRefused;
      const reason = this.failed.message;
      await this.discard();
      return { layer: null, reason, ...(refused ? { refused } : {}) };
    }
    return { layer: { dir: this.dir, diffId: `sha256:${this.hash.digest('hex')}` } };
  }

  async discard(): Promise<void> {
    this.fail(new Error('discarded'));
    this.gunzip?.close();
    await this.files.drained();
    await rm(this.dir, { recursive: true, force: true }).catch(() => undefined); // a tree left behind is swept at the next start (cleanStageLeftovers)
  }

  /** A tar header: checked, then made (a regular file is opened for its content). */
  private entry(h: TarHeader): void {
    if (escapesRoot(h.name) || (h.kind === 'link' && escapesRoot(h.linkname)))
      throw new LayerRefused(`invalid tar archive: ${JSON.stringify(h.kind === 'link' ? h.linkname : h.name)} is outside of the layer`);
    const rel = this.guard.check(h);
    const parent = posix.dirname(rel) === '.' ? '' : posix.dirname(rel);
    if (rel !== '' && !this.dirs.has(parent)) throw new GiveUp('parent not in the layer');
    const base = posix.basename(rel);
    const { marks } = this;
    if (base === WH_OPAQUE) {
      // containerd's OverlayConvertWhiteout: the directory marked opaque, the entry not written.
      if (/[\n\\]/.test(parent)) throw new GiveUp('opaque directory name');
      marks.xattrs.push([parent || '.', 'trusted.overlay.opaque', Buffer.from('y')]);
      return;
    }
    if (base.startsWith(WH_PREFIX)) {
      // …and a 0:0 character device (mode 0) owned as the whiteout entry, in its place.
      const target = posix.join(parent, base.slice(WH_PREFIX.length));
      if (this.seen.has(target) || marks.whiteouts.has(target)) throw new GiveUp('whiteout of something in the layer');
      marks.whiteouts.set(target, `${h.uid}:${h.gid}`);
      return;
    }
    if (marks.whiteouts.has(rel)) throw new GiveUp('entry over a whiteout');
    for (const [k, v] of Object.entries(h.pax)) {
      if (!k.startsWith('SCHILY.xattr.') || rel === '') continue;
      // PAX values come decoded as UTF-8: a binary one (a capability set) is not reproduced exactly.
      if (v.includes('\uFFFD') || h.kind === 'link' || /[\n\\]/.test(rel)) throw new GiveUp('xattrs');
      marks.xattrs.push([rel, k.slice('SCHILY.xattr.'.length), Buffer.from(v, 'utf8')]);
    }
    const abs = rel === '' ? this.dir : join(this.dir, rel);
    this.files.forget(rel);
    if (this.seen.has(rel) && h.kind !== 'directory') {
      rmSync(abs, { recursive: true, force: true });
      this.dirs.delete(rel);
    }
    this.seen.add(rel);
    this.make(h, rel, abs);
  }

  private make(h: TarHeader, rel: string, abs: string): void {
    switch (h.kind) {
      case 'directory': {
        if (rel === '') return; // containerd's applier leaves the layer's root as the snapshot made it
        if (!this.dirs.has(rel)) {
          rmSync(abs, { recursive: true, force: true }); // a file of the same name earlier in the layer
          mkdirSync(abs);
          this.dirs.add(rel);
        }
        applyEntryMeta(abs, h, h, this.dirTimes);
        return;
      }
      case 'file':
        this.files.begin(abs, rel, h);
        return;
      case 'symlink':
        symlinkSync(h.linkname, abs);
        applyEntryMeta(abs, h, h, this.dirTimes);
        return;
      case 'link': {
        const target = safeEntryPath(h.linkname);
        if (!this.seen.has(target) || this.dirs.has(target) || target === rel) throw new GiveUp('hard link to something outside the layer');
        linkSync(join(this.dir, target), abs);
        if (this.files.linkDeferred(target, rel, h)) return;
        // As containerd's applier: the link entry's owner, mode and time go to the shared inode.
        applyEntryMeta(abs, { ...h, kind: 'file' }, h, this.dirTimes);
        return;
      }
      default:
        throw new GiveUp(`${h.kind} entry`);
    }
  }

  /** Content of the entry: written when it is a regular file (others' content, if any, is skipped). */
  private data(c: Buffer): void {
    this.files.data(c);
  }

  private entryEnd(): void {
    this.files.end();
  }
}
