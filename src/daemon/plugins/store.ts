// Where managed plugins live on disk, as dockerd lays them out: `<data-root>/plugins/<id>/rootfs`
// (the unpacked rootfs, run in place), `<id>/propagated-mount`, the blobs a push needs
// (`plugins/blobs/sha256/<hex>`: the config and the layers as pulled or created), and the records of
// every plugin in one JSON file written atomically (temporary file, fsync, rename), so a crash
// leaves the old or the new state, never half of one.
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { PluginView } from '../../types/plugins.ts';

export interface PluginLayer {
  /** Digest and size of the blob (gzip), as in the manifest. */
  digest: string;
  size: number;
  /** Digest of the uncompressed tar (rootfs.diff_ids). */
  diffId: string;
}

/** One plugin: the API view plus what push and restart need. */
export interface PluginRecord extends PluginView {
  configDigest: string;
  layers: PluginLayer[];
}

const sha256Hex = (d: string) => {
  const m = /^sha256:([a-f0-9]{64})$/.exec(d);
  if (!m) throw new Error(`not a sha256 digest: ${d}`);
  return m[1]!;
};

export class PluginFiles {
  readonly blobsDir: string;
  private readonly recordsPath: string;

  constructor(readonly root: string) {
    this.blobsDir = join(root, 'blobs', 'sha256');
    this.recordsPath = join(root, 'plugins.json');
  }

  async init(): Promise<void> {
    await mkdir(this.blobsDir, { recursive: true, mode: 0o700 });
    await mkdir(join(this.root, 'tmp'), { recursive: true, mode: 0o700 });
  }

  pluginDir(id: string): string {
    return join(this.root, id);
  }
  rootfs(id: string): string {
    return join(this.root, id, 'rootfs');
  }
  propagatedMount(id: string): string {
    return join(this.root, id, 'propagated-mount');
  }
  logFile(id: string): string {
    return join(this.root, id, 'plugin.log');
  }
  tmp(): string {
    return join(this.root, 'tmp');
  }
  blobPath(digest: string): string {
    return join(this.blobsDir, sha256Hex(digest));
  }

  async hasBlob(digest: string, size?: number): Promise<boolean> {
    const s = await stat(this.blobPath(digest)).catch(() => undefined); // Absent (or unreadable): the blob is fetched or written again.
    return !!s && (size === undefined || s.size === size);
  }

  /** Stores bytes as a blob; returns the digest. */
  async putBlob(bytes: Buffer): Promise<string> {
    const digest = `sha256:${createHash('sha256').update(bytes).digest('hex')}`;
    await writeAtomic(this.blobPath(digest), bytes);
    return digest;
  }

  /** Moves a finished file (already checked against `digest`) into the blob store. */
  async adoptBlob(path: string, digest: string): Promise<void> {
    await rename(path, this.blobPath(digest));
  }

  readBlob(digest: string): Promise<Buffer> {
    return readFile(this.blobPath(digest));
  }
  blobStream(digest: string): NodeJS.ReadableStream {
    return createReadStream(this.blobPath(digest));
  }

  async load(): Promise<PluginRecord[]> {
    let text: string;
    try {
      text = await readFile(this.recordsPath, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return [];
      throw err;
    }
    try {
      return (JSON.parse(text) as { plugins?: PluginRecord[] }).plugins ?? [];
    } catch (err) {
      // Written atomically, so this is damage from outside: say where, rather than drop every plugin.
      throw new Error(
        `the managed plugins' records in ${this.recordsPath} are not valid JSON (${(err as Error).message}); repair or remove the file`,
      );
    }
  }

  async save(records: PluginRecord[]): Promise<void> {
    await writeAtomic(this.recordsPath, Buffer.from(JSON.stringify({ plugins: records }, null, 1)));
  }

  async removePlugin(id: string): Promise<void> {
    await rm(this.pluginDir(id), { recursive: true, force: true });
  }

  /** Blobs no plugin refers to any more. */
  async dropBlobsExcept(keep: Set<string>): Promise<void> {
    for (const name of await readdir(this.blobsDir)) {
      if (!keep.has(`sha256:${name}`)) await rm(join(this.blobsDir, name), { force: true });
    }
  }
}

async function writeAtomic(path: string, bytes: Buffer): Promise<void> {
  const tmp = `${path}.tmp-${process.pid}`;
  const fh = await open(tmp, 'w', 0o600);
  try {
    await fh.writeFile(bytes);
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
}
