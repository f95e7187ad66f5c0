// Archives arrive plain or compressed (gzip, zstd, bzip2, xz), as dockerd accepts them for load and
// import: sniff the first bytes and decompress on the fly. gzip and zstd are Node built-ins; bzip2
// and xz go through the system tools when they are installed.
import { spawn } from 'node:child_process';
import { pipeline, Readable } from 'node:stream';
import zlib from 'node:zlib';
import { invalidParameter } from '../errors.ts';
import { sniffCompression } from '../wire/compression.ts';

async function* prepend(first: Buffer[], it: AsyncIterator<Uint8Array>): AsyncGenerator<Buffer> {
  for (const b of first) yield b;
  for (;;) {
    const r = await it.next();
    if (r.done) return;
    yield Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
  }
}

function throughTool(cmd: string, input: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  const child = spawn(cmd, ['-dc'], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise<void>((resolve, reject) => {
    child.on('error', (err) => reject(invalidParameter(`cannot decompress ${cmd} archive: ${err.message}`)));
    child.on('close', (code) => (code === 0 ? resolve() : reject(invalidParameter(`${cmd}: ${stderr.trim() || `exit ${code}`}`))));
  });
  pipeline(Readable.from(input), child.stdin, (err) => {
    if (err) child.kill('SIGKILL');
  });
  return (async function* () {
    try {
      for await (const c of child.stdout) yield c as Buffer;
      await exited;
    } finally {
      if (child.exitCode === null) {
        // The reader stopped early (the tar's end came before the tool's exit): killed, it exits null.
        exited.catch(() => undefined); // that "exit null" is expected, not an error anyone waits for
        child.kill('SIGKILL');
      }
    }
  })();
}

/** The decompressed bytes of `source`, whatever its compression. */
export async function* decompressed(source: AsyncIterable<Uint8Array>): AsyncGenerator<Buffer> {
  const it = source[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headLen = 0;
  while (headLen < 6) {
    const r = await it.next();
    if (r.done) break;
    const b = Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength);
    head.push(b);
    headLen += b.length;
  }
  const kind = sniffCompression(Buffer.concat(head));
  const raw = prepend(head, it);
  if (kind === 'none') {
    yield* raw;
    return;
  }
  if (kind === 'bzip2' || kind === 'xz') {
    yield* throughTool(kind, raw);
    return;
  }
  const inflate = kind === 'gzip' ? zlib.createGunzip() : zlib.createZstdDecompress();
  const out = pipeline(Readable.from(raw), inflate, () => undefined); // source errors reach `out` too
  try {
    for await (const c of out) yield c as Buffer;
  } catch (err) {
    throw invalidParameter(`cannot decompress ${kind} archive: ${(err as Error).message}`);
  }
}
