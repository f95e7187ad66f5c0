// Moving plugins in and out: a plugin in a registry is a schema-2 manifest whose config has the
// media type application/vnd.docker.plugin.v1+json and whose layers make its rootfs. Pull fetches
// the config and the layers (digests checked, layers' diff IDs checked while they unpack), push
// uploads what the blob store holds and writes the manifest. `docker plugin create`'s tar
// (config.json + rootfs/) becomes the same two things: a config blob and one layer.
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, readFile, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { PassThrough, Readable, Transform, Writable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';
import { EngineError, invalidParameter } from '../../errors.ts';
import { translateRegistryError } from '../../images/distribution/errors.ts';
import type { RegistrySession } from '../../images/distribution/registry-client.ts';
import { readAll } from '../../images/distribution/transport.ts';
import type { PluginConfig } from '../../types/plugins.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import { itemStatus, shortId } from '../../images/distribution/progress.ts';
import type { Reference } from '../../util/image-reference.ts';
import { LAYER_MEDIA_TYPE, MANIFEST_MEDIA_TYPE, parsePluginConfig, PLUGIN_CONFIG_MEDIA_TYPE } from './config.ts';
import type { PluginFiles, PluginLayer } from './store.ts';

interface Descriptor {
  mediaType: string;
  digest: string;
  size: number;
}
interface Manifest {
  schemaVersion?: number;
  mediaType?: string;
  config?: Descriptor;
  layers?: Descriptor[];
}

/** A hashing pass-through: digest of what went through, and how many bytes. */
class Hasher extends Transform {
  private readonly h = createHash('sha256');
  size = 0;
  override _transform(chunk: Buffer, _enc: BufferEncoding, cb: () => void): void {
    this.h.update(chunk);
    this.size += chunk.length;
    this.push(chunk);
    cb();
  }
  digest(): string {
    return `sha256:${this.h.digest('hex')}`;
  }
}

/** Runs `tar` (numeric owners, as root does) with stdin or stdout piped; rejects with its stderr. */
function tar(args: string[]): { proc: ReturnType<typeof spawn>; done: Promise<void> } {
  const proc = spawn('tar', ['--numeric-owner', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let err = '';
  proc.stderr!.on('data', (c: Buffer) => {
    err += c.toString();
  });
  const done = new Promise<void>((resolve, reject) => {
    proc.on('error', reject);
    proc.on('close', (code) =>
      code === 0 ? resolve() : reject(new EngineError('INTERNAL', `tar ${args[0]} failed: ${err.trim() || `exit ${code}`}`)),
    );
  });
  return { proc, done };
}

/**
 * Feeds a child's stdin and hashes everything fed. tar stops reading at its end-of-archive marker,
 * so what follows (block padding) is still hashed but no longer written once stdin has closed.
 */
function hashInto(stdin: NodeJS.WritableStream & { destroyed?: boolean; writableEnded?: boolean }): {
  sink: Writable;
  digest: () => string;
} {
  const h = createHash('sha256');
  let closed = false;
  stdin.on('error', () => {
    closed = true;
  }); // EPIPE: tar has what it needs (its exit status says if not)
  stdin.on('close', () => {
    closed = true;
  });
  const sink = new Writable({
    write(chunk: Buffer, _enc, cb) {
      h.update(chunk);
      if (closed || stdin.destroyed) return cb();
      if (stdin.write(chunk)) return cb();
      const go = () => {
        stdin.removeListener('drain', go);
        stdin.removeListener('close', go);
        cb();
      };
      stdin.once('drain', go);
      stdin.once('close', go);
    },
    final(cb) {
      if (!closed && !stdin.writableEnded) stdin.end();
      cb();
    },
  });
  return { sink, digest: () => `sha256:${h.digest('hex')}` };
}

/** Unpacks a gzip layer blob into `dir`; returns the digest of the uncompressed tar (its diff ID). */
export async function unpackLayer(blobPath: string, dir: string): Promise<string> {
  await mkdir(dir, { recursive: true });
  const { proc, done } = tar(['-x', '-p', '-f', '-', '-C', dir]);
  proc.stdout!.resume();
  const { sink, digest } = hashInto(proc.stdin!);
  await Promise.all([pipeline(createReadStream(blobPath), createGunzip(), sink), done]);
  return digest();
}

/** Packs `dir` as one gzip layer in the blob store; returns its descriptor. */
export async function packLayer(dir: string, files: PluginFiles): Promise<PluginLayer> {
  const tmp = join(files.tmp(), `layer-${randomBytes(6).toString('hex')}`);
  const { proc, done } = tar(['-c', '-f', '-', '-C', dir, '.']);
  proc.stdin!.end();
  const raw = new Hasher();
  const gz = new Hasher();
  try {
    await Promise.all([pipeline(proc.stdout!, raw, createGzip({ level: 6 }), gz, createWriteStream(tmp)), done]);
    const digest = gz.digest();
    await files.adoptBlob(tmp, digest);
    return { digest, size: gz.size, diffId: raw.digest() };
  } finally {
    await rm(tmp, { force: true });
  }
}

/**
 * `docker plugin create`: the request body is a tar of config.json and rootfs/. Unpacks it under a
 * temporary directory; returns the parsed config, the rootfs directory and the directory to delete.
 */
export async function unpackCreateContext(
  body: NodeJS.ReadableStream,
  files: PluginFiles,
): Promise<{ config: PluginConfig; rootfs: string; tmp: string }> {
  const tmp = join(files.tmp(), `create-${randomBytes(6).toString('hex')}`);
  await mkdir(tmp, { recursive: true, mode: 0o700 });
  try {
    const { proc, done } = tar(['-x', '-p', '-f', '-', '-C', tmp]);
    proc.stdout!.resume();
    await Promise.all([pipeline(body as Readable, hashInto(proc.stdin!).sink), done]).catch((err) => {
      throw invalidParameter(`invalid plugin context: ${(err as Error).message}`);
    });
    let text: string;
    try {
      text = await readFile(join(tmp, 'config.json'), 'utf8');
    } catch {
      throw invalidParameter('invalid plugin context: config.json is missing');
    }
    let raw: unknown;
    try {
      raw = JSON.parse(text);
    } catch (err) {
      throw invalidParameter(`invalid plugin context: config.json is not valid JSON: ${(err as Error).message}`);
    }
    const config = parsePluginConfig(raw);
    const rootfs = join(tmp, 'rootfs');
    const st = await stat(rootfs).catch(() => undefined); // absent: reported just below
    if (!st?.isDirectory()) throw invalidParameter('invalid plugin context: the rootfs directory is missing');
    return { config, rootfs, tmp };
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    throw err;
  }
}

export interface PulledPlugin {
  config: PluginConfig;
  configDigest: string;
  layers: PluginLayer[];
  /** The rootfs, unpacked under the plugins' temporary directory. */
  rootfs: string;
  manifestDigest: string;
}

/** The manifest and config of a plugin in a registry (GET /plugins/privileges needs no more). */
export async function fetchPluginConfig(
  session: RegistrySession,
  ref: Reference,
  remote: string,
  signal?: AbortSignal,
): Promise<{ manifest: Manifest; manifestDigest: string; config: PluginConfig; configBytes: Buffer }> {
  let fetched;
  try {
    fetched = await session.getManifest(ref.path, ref.digest ?? ref.tag ?? 'latest', signal);
  } catch (err) {
    throw err instanceof EngineError ? err : translateRegistryError(err);
  }
  const manifest = JSON.parse(fetched.bytes.toString('utf8')) as Manifest;
  if (!manifest.config || !Array.isArray(manifest.layers))
    throw invalidParameter(`${remote} is not a plugin: its manifest (${fetched.mediaType}) has no config and layers`);
  if (manifest.config.mediaType !== PLUGIN_CONFIG_MEDIA_TYPE)
    throw invalidParameter(
      `${remote} is not a plugin: its config has the media type ${manifest.config.mediaType}, not ${PLUGIN_CONFIG_MEDIA_TYPE}`,
    );
  const res = await session.getBlob(ref.path, manifest.config.digest, signal).catch((err) => {
    throw translateRegistryError(err);
  });
  const configBytes = await readAll(res.body, 4 << 20);
  const got = `sha256:${createHash('sha256').update(configBytes).digest('hex')}`;
  if (got !== manifest.config.digest)
    throw new EngineError('INTERNAL', `plugin config verification failed: expected ${manifest.config.digest}, got ${got}`);
  let raw: unknown;
  try {
    raw = JSON.parse(configBytes.toString('utf8'));
  } catch (err) {
    throw new EngineError('INTERNAL', `the config of ${remote} is not valid JSON: ${(err as Error).message}`);
  }
  return { manifest, manifestDigest: fetched.digest, config: parsePluginConfig(raw), configBytes };
}

/**
 * Pulls a plugin: config and layers into the blob store, the layers unpacked into a new rootfs.
 * `accept` sees the config before any layer is fetched or any progress written (the privileges check).
 */
export async function pullPlugin(
  session: RegistrySession,
  ref: Reference,
  remote: string,
  files: PluginFiles,
  accept: (c: PluginConfig) => void,
  sink: ProgressSink,
  signal?: AbortSignal,
): Promise<PulledPlugin> {
  const { manifest, manifestDigest, config, configBytes } = await fetchPluginConfig(session, ref, remote, signal);
  accept(config);
  sink({ status: `${ref.digest ?? ref.tag ?? 'latest'}: Pulling from ${ref.path}` });
  const diffIds = config.rootfs?.diff_ids ?? [];
  const layers = manifest.layers!;
  if (diffIds.length !== layers.length)
    throw new EngineError('INTERNAL', `${remote}: the config lists ${diffIds.length} layers, the manifest ${layers.length}`);
  const configDigest = await files.putBlob(configBytes);
  const rootfs = join(files.tmp(), `rootfs-${randomBytes(6).toString('hex')}`);
  try {
    const out: PluginLayer[] = [];
    for (const [i, l] of layers.entries()) {
      if (await files.hasBlob(l.digest, l.size)) sink(itemStatus(shortId(l.digest), 'Already exists'));
      else {
        sink(itemStatus(shortId(l.digest), 'Downloading'));
        await downloadBlob(session, ref, l, files, signal);
        sink(itemStatus(shortId(l.digest), 'Download complete'));
      }
      const diffId = await unpackLayer(files.blobPath(l.digest), rootfs);
      if (diffId !== diffIds[i])
        throw new EngineError('INTERNAL', `${remote}: layer ${l.digest} unpacks to ${diffId}, but the config says ${diffIds[i]}`);
      out.push({ digest: l.digest, size: l.size, diffId });
    }
    sink({ status: `Digest: ${manifestDigest}` });
    return { config, configDigest, layers: out, rootfs, manifestDigest };
  } catch (err) {
    await rm(rootfs, { recursive: true, force: true });
    throw err;
  }
}

async function downloadBlob(
  session: RegistrySession,
  ref: Reference,
  l: Descriptor,
  files: PluginFiles,
  signal?: AbortSignal,
): Promise<void> {
  const tmp = join(files.tmp(), `blob-${randomBytes(6).toString('hex')}`);
  try {
    const res = await session.getBlob(ref.path, l.digest, signal).catch((err) => {
      throw translateRegistryError(err);
    });
    const h = new Hasher();
    await pipeline(res.body, h, createWriteStream(tmp));
    if (h.digest() !== l.digest || h.size !== l.size)
      throw new EngineError(
        'INTERNAL',
        `layer verification failed: expected ${l.digest} (${l.size} bytes), got ${h.digest()} (${h.size} bytes)`,
      );
    await files.adoptBlob(tmp, l.digest);
  } finally {
    await rm(tmp, { force: true });
  }
}

/** Pushes a plugin: layers and config (each only when the registry lacks it), then the manifest. Returns its digest. */
export async function pushPlugin(
  session: RegistrySession,
  ref: Reference,
  p: { configDigest: string; layers: PluginLayer[] },
  files: PluginFiles,
  sink: ProgressSink,
  signal?: AbortSignal,
): Promise<{ digest: string; size: number }> {
  const configBytes = await files.readBlob(p.configDigest);
  const blobs: Descriptor[] = [
    ...p.layers.map((l) => ({ mediaType: LAYER_MEDIA_TYPE, digest: l.digest, size: l.size })),
    { mediaType: PLUGIN_CONFIG_MEDIA_TYPE, digest: p.configDigest, size: configBytes.length },
  ];
  try {
    for (const b of blobs) {
      const isLayer = b.mediaType !== PLUGIN_CONFIG_MEDIA_TYPE;
      if (isLayer) sink(itemStatus(shortId(b.digest), 'Preparing'));
      if ((await session.blobSize(ref.path, b.digest, signal)) !== null) {
        if (isLayer) sink(itemStatus(shortId(b.digest), 'Layer already exists'));
        continue;
      }
      const location = await session.startUpload(ref.path, signal);
      const body = isLayer ? (files.blobStream(b.digest) as Readable).pipe(new PassThrough()) : Readable.from([configBytes]);
      await session.finishUpload(location, b.digest, b.size, body, signal);
      if (isLayer) sink(itemStatus(shortId(b.digest), 'Pushed'));
    }
    const manifest = Buffer.from(
      JSON.stringify({
        schemaVersion: 2,
        mediaType: MANIFEST_MEDIA_TYPE,
        config: blobs[blobs.length - 1],
        layers: blobs.slice(0, -1),
      }),
    );
    const tag = ref.tag ?? 'latest';
    await session.putManifest(ref.path, tag, MANIFEST_MEDIA_TYPE, manifest, signal);
    const digest = `sha256:${createHash('sha256').update(manifest).digest('hex')}`;
    sink({ status: `${tag}: digest: ${digest} size: ${manifest.length}` });
    sink({ progressDetail: {}, aux: { Tag: tag, Digest: digest, Size: manifest.length } });
    return { digest, size: manifest.length };
  } catch (err) {
    throw err instanceof EngineError ? err : translateRegistryError(err);
  }
}
