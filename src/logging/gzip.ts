// Compressed rotated files. Like dockerd, the gzip header's FEXTRA field carries
// {"lastTime":"<RFC 3339 nano>"} (the time of the file's last entry), so readers with --since can
// skip whole files without inflating them. Node's zlib cannot write header fields, so the member is
// framed by hand around a raw deflate stream.

import { createReadStream, createWriteStream } from 'node:fs';
import type { FileHandle } from 'node:fs/promises';
import { rename, rm } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Readable, Transform } from 'node:stream';
import { constants, crc32, createDeflateRaw, createGunzip } from 'node:zlib';
import { formatTimeNano, parseTimeNano } from '../util/time.ts';

function gzipHeader(extra: Buffer): Buffer {
  const h = Buffer.alloc(12 + extra.length);
  h[0] = 0x1f;
  h[1] = 0x8b;
  h[2] = 8; //    deflate
  h[3] = 0x04; // FEXTRA
  // MTIME 0, XFL 0
  h[9] = 255; //  OS unknown (what Go writes)
  h.writeUInt16LE(extra.length, 10);
  extra.copy(h, 12);
  return h;
}

/** Compresses src into dest (via dest.tmp, then renamed) and removes src afterwards. */
export async function compressLogFile(src: string, dest: string, lastTime: bigint): Promise<void> {
  const tmp = `${dest}.tmp`;
  const extra = Buffer.from(JSON.stringify({ lastTime: formatTimeNano(lastTime) }));
  let crc = 0;
  let size = 0;
  const tap = new Transform({
    transform(chunk: Buffer, _enc, cb) {
      crc = crc32(chunk, crc);
      size = (size + chunk.length) >>> 0;
      cb(null, chunk);
    },
  });
  try {
    await pipeline(
      createReadStream(src),
      tap,
      createDeflateRaw({ level: constants.Z_BEST_SPEED }),
      async function* frame(body: AsyncIterable<Buffer>) {
        yield gzipHeader(extra);
        yield* body;
        const trailer = Buffer.alloc(8);
        trailer.writeUInt32LE(crc >>> 0, 0);
        trailer.writeUInt32LE(size, 4);
        yield trailer;
      },
      createWriteStream(tmp, { mode: 0o640 }),
    );
    // Publish the .gz before removing the plain file, so a reader always finds one of the two.
    await rename(tmp, dest);
    await rm(src, { force: true });
  } catch (err) {
    await rm(tmp, { force: true });
    throw err;
  }
}

/** The lastTime stored in the gzip header, when the file has one. */
export async function gzipLastTime(handle: FileHandle): Promise<bigint | undefined> {
  const head = Buffer.alloc(12);
  const { bytesRead } = await handle.read(head, 0, 12, 0);
  if (bytesRead < 12 || head[0] !== 0x1f || head[1] !== 0x8b || (head[3]! & 0x04) === 0) return undefined;
  const xlen = head.readUInt16LE(10);
  const extra = Buffer.alloc(xlen);
  await handle.read(extra, 0, xlen, 12);
  try {
    const meta = JSON.parse(extra.toString('utf8')) as { lastTime?: string };
    return typeof meta.lastTime === 'string' ? parseTimeNano(meta.lastTime) : undefined;
  } catch {
    // no (or foreign) metadata in the gzip header
    return undefined;
  }
}

/** The inflated bytes of a gzip file, in chunks. The handle stays open (it is only read from). */
export async function* gunzipChunks(handle: FileHandle, size: number): AsyncGenerator<Buffer> {
  async function* compressed(): AsyncGenerator<Buffer> {
    for (let pos = 0; pos < size;) {
      const buf = Buffer.allocUnsafe(Math.min(256 * 1024, size - pos));
      const { bytesRead } = await handle.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return;
      pos += bytesRead;
      yield buf.subarray(0, bytesRead);
    }
  }
  const input = Readable.from(compressed());
  const gunzip = createGunzip({ chunkSize: 256 * 1024 });
  input.on('error', (err) => gunzip.destroy(err));
  input.pipe(gunzip);
  try {
    for await (const chunk of gunzip) yield chunk as Buffer;
  } finally {
    input.unpipe(gunzip);
    input.destroy();
    gunzip.destroy();
  }
}
