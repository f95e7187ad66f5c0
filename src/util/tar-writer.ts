// A streaming tar writer: POSIX ustar headers, with PAX extended headers for whatever ustar cannot
// hold (long or non-ASCII names and link targets, sizes ≥ 8 GiB, large ids, long user/group names)
// and for extra records such as xattrs. 512-byte blocks, two zero blocks at the end, no record
// padding (like Go's archive/tar, which produced every image layer we will read).

import fs from 'node:fs';
import type { Writable } from 'node:stream';
import { paxRecord, setTarChecksum, writeTarNumber } from '../wire/tar-header.ts';

export type TarEntryType = 'file' | 'directory' | 'symlink' | 'link' | 'char' | 'block' | 'fifo';

export interface TarEntry {
  /** Path inside the archive, relative ("bin/sh"); a trailing slash is added for directories. */
  name: string;
  type?: TarEntryType;
  /** Permission bits incl. setuid/setgid/sticky; default 0644 for files, 0755 for directories. */
  mode?: number;
  uid?: number;
  gid?: number;
  uname?: string;
  gname?: string;
  /** Seconds since the epoch or a Date; default now. */
  mtime?: number | Date;
  /** Content size (regular files only). */
  size?: number;
  /** Target of a symlink or hard link. */
  linkname?: string;
  devmajor?: number;
  devminor?: number;
  /** Extra PAX records, e.g. { 'SCHILY.xattr.security.capability': '…' }. */
  pax?: Record<string, string>;
}

const BLOCK = 512;
const TYPEFLAG: Record<TarEntryType, string> = { file: '0', link: '1', symlink: '2', char: '3', block: '4', directory: '5', fifo: '6' };
const MAX_OCTAL_11 = 0o77777777777; // size and mtime fields
const MAX_OCTAL_7 = 0o7777777; // uid and gid fields

type Sink = Writable | ((chunk: Buffer) => void | Promise<void>);

function isAscii(s: string): boolean {
  return /^[\x00-\x7f]*$/.test(s);
}

export { paxRecord };

/** Splits a long path into ustar prefix (≤155) and name (≤100) at a slash, or null if it cannot. */
function splitUstarPath(p: string): [string, string] | null {
  if (!isAscii(p)) return null; // like Go's archive/tar: non-ASCII names go to PAX (UTF-8 by definition)
  if (p.length <= 100) return ['', p];
  if (p.length > 256) return null;
  for (let i = p.length - 1; i > 0; i--) {
    if (p[i] !== '/') continue;
    const prefix = p.slice(0, i);
    const name = p.slice(i + 1);
    if (prefix.length > 155) continue;
    if (name.length === 0 || name.length > 100) return null;
    return [prefix, name];
  }
  return null;
}

function writeString(buf: Buffer, offset: number, length: number, s: string): void {
  buf.write(s, offset, Math.min(length, s.length), 'latin1'); // callers pass ASCII only
}

/** Zero-padded octal with a trailing NUL, filling `length` bytes (the shared codec: wire/tar-header.ts). */
const writeOctal = writeTarNumber;

export function buildHeader(e: {
  name: string;
  prefix: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  typeflag: string;
  linkname: string;
  uname: string;
  gname: string;
  devmajor: number;
  devminor: number;
}): Buffer {
  const h = Buffer.alloc(BLOCK);
  writeString(h, 0, 100, e.name);
  writeOctal(h, 100, 8, e.mode);
  writeOctal(h, 108, 8, e.uid);
  writeOctal(h, 116, 8, e.gid);
  writeOctal(h, 124, 12, e.size);
  writeOctal(h, 136, 12, e.mtime);
  h.write(e.typeflag, 156, 1, 'ascii');
  writeString(h, 157, 100, e.linkname);
  h.write('ustar\x0000', 257, 8, 'ascii');
  writeString(h, 265, 32, e.uname);
  writeString(h, 297, 32, e.gname);
  writeOctal(h, 329, 8, e.devmajor);
  writeOctal(h, 337, 8, e.devminor);
  writeString(h, 345, 155, e.prefix);
  setTarChecksum(h);
  return h;
}

export class TarWriter {
  private readonly sink: Sink;
  private finished = false;
  private paxCount = 0;
  /** Bytes written so far. */
  written = 0;

  /** sink: a Writable (backpressure is honoured) or a function receiving each chunk. */
  constructor(sink: Sink) {
    this.sink = sink;
  }

  private async push(chunk: Buffer): Promise<void> {
    this.written += chunk.length;
    if (typeof this.sink === 'function') {
      await this.sink(chunk);
      return;
    }
    const out = this.sink;
    if (!out.write(chunk)) {
      await new Promise<void>((resolve, reject) => {
        const done = (err?: Error) => {
          out.off('drain', done);
          out.off('error', done);
          out.off('close', done);
          if (err) reject(err);
          else resolve();
        };
        out.once('drain', done);
        out.once('error', done);
        out.once('close', done);
      });
    }
  }

  private async header(entry: TarEntry, size: number): Promise<void> {
    if (this.finished) throw new Error('tar: write after finish');
    const type = entry.type ?? 'file';
    let name = entry.name.replace(/^\/+/, '');
    if (type === 'directory' && !name.endsWith('/')) name += '/';
    if (!name) throw new Error('tar: empty entry name');
    const mode = (entry.mode ?? (type === 'directory' ? 0o755 : 0o644)) & 0o7777;
    const uid = entry.uid ?? 0;
    const gid = entry.gid ?? 0;
    const mtimeRaw = entry.mtime instanceof Date ? entry.mtime.getTime() / 1000 : (entry.mtime ?? Date.now() / 1000);
    const mtime = Math.floor(mtimeRaw);
    const linkname = entry.linkname ?? '';
    const uname = entry.uname ?? '';
    const gname = entry.gname ?? '';

    const pax: Record<string, string> = { ...entry.pax };
    const split = splitUstarPath(name);
    if (!split) pax.path = name;
    if (Buffer.byteLength(linkname) > 100 || !isAscii(linkname)) pax.linkpath = linkname;
    if (size > MAX_OCTAL_11) pax.size = String(size);
    if (uid > MAX_OCTAL_7) pax.uid = String(uid);
    if (gid > MAX_OCTAL_7) pax.gid = String(gid);
    if (mtime < 0 || mtime > MAX_OCTAL_11) pax.mtime = String(mtime);
    if (Buffer.byteLength(uname) > 32 || !isAscii(uname)) pax.uname = uname;
    if (Buffer.byteLength(gname) > 32 || !isAscii(gname)) pax.gname = gname;

    if (Object.keys(pax).length) {
      const body = Buffer.from(
        Object.entries(pax)
          .map(([k, v]) => paxRecord(k, v))
          .join(''),
      );
      const base = name.replace(/\/$/, '').split('/').pop()!;
      const paxName = `PaxHeaders.${this.paxCount++}/${base}`;
      await this.push(
        buildHeader({
          name: asciiStandIn(paxName, 100),
          prefix: '',
          mode: 0o644,
          uid: 0,
          gid: 0,
          size: body.length,
          mtime: Math.max(0, Math.min(mtime, MAX_OCTAL_11)),
          typeflag: 'x',
          linkname: '',
          uname: '',
          gname: '',
          devmajor: 0,
          devminor: 0,
        }),
      );
      await this.push(body);
      await this.pad(body.length);
    }

    // Fields that went to PAX get a truncated/zeroed stand-in in the ustar header.
    const [prefix, shortName] = split ?? ['', asciiStandIn(name, 100)];
    await this.push(
      buildHeader({
        name: shortName,
        prefix,
        mode,
        uid: pax.uid ? 0 : uid,
        gid: pax.gid ? 0 : gid,
        size: pax.size ? 0 : size,
        mtime: pax.mtime ? 0 : mtime,
        typeflag: TYPEFLAG[type],
        linkname: pax.linkpath !== undefined ? asciiStandIn(linkname, 100) : linkname,
        uname: pax.uname !== undefined ? '' : uname,
        gname: pax.gname !== undefined ? '' : gname,
        devmajor: entry.devmajor ?? 0,
        devminor: entry.devminor ?? 0,
      }),
    );
  }

  private async pad(size: number): Promise<void> {
    const rest = size % BLOCK;
    if (rest) await this.push(Buffer.alloc(BLOCK - rest));
  }

  /** Writes any entry; `content` only for regular files (its length must equal entry.size). */
  async entry(entry: TarEntry, content?: Buffer | AsyncIterable<Uint8Array>): Promise<void> {
    const type = entry.type ?? 'file';
    if (type !== 'file') {
      if (content) throw new Error(`tar: ${type} entry ${entry.name} cannot have content`);
      await this.header(entry, 0);
      return;
    }
    if (content === undefined || Buffer.isBuffer(content)) {
      const data = content ?? Buffer.alloc(0);
      if (entry.size !== undefined && entry.size !== data.length)
        throw new Error(`tar: ${entry.name}: size ${entry.size} != ${data.length}`);
      await this.header(entry, data.length);
      if (data.length) await this.push(data);
      await this.pad(data.length);
      return;
    }
    if (entry.size === undefined) throw new Error(`tar: ${entry.name}: size is required for streamed content`);
    await this.header(entry, entry.size);
    let n = 0;
    for await (const piece of content) {
      const buf = Buffer.from(piece.buffer, piece.byteOffset, piece.byteLength);
      if (n + buf.length > entry.size) throw new Error(`tar: ${entry.name}: content longer than ${entry.size} bytes`);
      n += buf.length;
      await this.push(buf);
    }
    if (n !== entry.size) throw new Error(`tar: ${entry.name}: content is ${n} bytes, header says ${entry.size}`);
    await this.pad(n);
  }

  directory(name: string, opts: Omit<TarEntry, 'name' | 'type'> = {}): Promise<void> {
    return this.entry({ ...opts, name, type: 'directory' });
  }

  file(name: string, data: Buffer | string, opts: Omit<TarEntry, 'name' | 'type'> = {}): Promise<void> {
    return this.entry({ ...opts, name, type: 'file' }, typeof data === 'string' ? Buffer.from(data) : data);
  }

  /** A regular file streamed from disk; size (and, unless given, mode and mtime) from fstat. */
  async fileFromPath(name: string, srcPath: string, opts: Omit<TarEntry, 'name' | 'type' | 'size'> = {}): Promise<void> {
    const fh = await fs.promises.open(srcPath, 'r');
    try {
      const st = await fh.stat();
      if (!st.isFile()) throw new Error(`tar: ${srcPath} is not a regular file`);
      await this.entry(
        { mode: st.mode & 0o7777, mtime: st.mtime, ...opts, name, type: 'file', size: st.size },
        fh.createReadStream({ autoClose: false, start: 0, end: st.size ? st.size - 1 : 0, highWaterMark: 1 << 20 }).iterator(),
      );
    } finally {
      await fh.close();
    }
  }

  symlink(name: string, target: string, opts: Omit<TarEntry, 'name' | 'type' | 'linkname'> = {}): Promise<void> {
    return this.entry({ mode: 0o777, ...opts, name, type: 'symlink', linkname: target });
  }

  /** A hard link to an entry written earlier (target is that entry's archive path). */
  hardlink(name: string, target: string, opts: Omit<TarEntry, 'name' | 'type' | 'linkname'> = {}): Promise<void> {
    return this.entry({ ...opts, name, type: 'link', linkname: target.replace(/^\/+/, '') });
  }

  /** Writes the two zero blocks that end the archive (does not end a Writable sink). */
  async finish(): Promise<void> {
    if (this.finished) return;
    await this.push(Buffer.alloc(BLOCK * 2));
    this.finished = true;
  }
}

/** What goes in a ustar field whose real value is carried by PAX: its ASCII characters, truncated. */
function asciiStandIn(s: string, max: number): string {
  return s.replace(/[^\x00-\x7f]/g, '').slice(0, max);
}

/** Builds a whole archive in memory. */
export async function tarToBuffer(build: (tw: TarWriter) => Promise<void>): Promise<Buffer> {
  const chunks: Buffer[] = [];
  const tw = new TarWriter((c) => {
    chunks.push(c);
  });
  await build(tw);
  await tw.finish();
  return Buffer.concat(chunks);
}
