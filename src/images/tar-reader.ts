// A streaming tar reader (ustar, GNU long names, PAX; header fields by wire/tar-header.ts), in two shapes: a synchronous push parser
// (feed it chunks as they pass by, e.g. to check a layer while it is being stored) and an async
// iterator of entries with streamed bodies built on it. Plus the path rules that keep an archive
// inside its root: no absolute names, no `..` components, no links that lead out.
import { posix } from 'node:path';
import { invalidParameter } from '../errors.ts';
import { parsePaxRecords, readTarNumber, TAR_BLOCK, tarChecksumOk, tarPadding, tarString } from '../wire/tar-header.ts';

export type TarEntryKind = 'file' | 'link' | 'symlink' | 'char' | 'block' | 'directory' | 'fifo' | 'other';

export interface TarHeader {
  name: string;
  kind: TarEntryKind;
  typeflag: string;
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtime: number;
  linkname: string;
  uname: string;
  gname: string;
  devmajor: number;
  devminor: number;
  /** PAX records that applied to this entry (xattrs among them). */
  pax: Record<string, string>;
}

export interface TarSink {
  entry(h: TarHeader): void;
  data(chunk: Buffer): void;
  entryEnd(): void;
}

const BLOCK = TAR_BLOCK;
const MAX_META = 1 << 20; // PAX and GNU long-name records are small; refuse absurd ones
const HEADER_ONLY = new Set(['1', '2', '3', '4', '5', '6']);

const bad = (what: string) => invalidParameter(`invalid tar archive: ${what}`);
const cstring = tarString;

function numeric(b: Buffer, off: number, len: number): number {
  const n = readTarNumber(b, off, len);
  if (n === undefined)
    throw bad(
      `bad numeric field ${JSON.stringify(
        b
          .toString('latin1', off, off + len)
          .replace(/\0.*$/s, '')
          .trim(),
      )}`,
    );
  return n;
}

function parsePax(body: Buffer): Record<string, string> {
  const out = parsePaxRecords(body);
  if (!out) throw bad('bad PAX record');
  return out;
}

function kindOf(typeflag: string, name: string): TarEntryKind {
  switch (typeflag) {
    case '0':
    case '7':
      return 'file';
    case '\0':
      return name.endsWith('/') ? 'directory' : 'file';
    case '1':
      return 'link';
    case '2':
      return 'symlink';
    case '3':
      return 'char';
    case '4':
      return 'block';
    case '5':
      return 'directory';
    case '6':
      return 'fifo';
    default:
      return 'other';
  }
}

/** Push parser: call push() with each chunk, end() at the end of input; the sink sees entries. */
export class TarParser {
  private state: 'header' | 'data' | 'pad' | 'end' = 'header';
  private readonly hdr = Buffer.alloc(BLOCK);
  private hdrFill = 0;
  private remaining = 0;
  private padRemaining = 0;
  private meta: { type: string; parts: Buffer[]; size: number } | null = null;
  private nextPax: Record<string, string> = {};
  private globalPax: Record<string, string> = {};
  private longName: string | null = null;
  private longLink: string | null = null;
  /** Bytes consumed so far. */
  offset = 0;

  constructor(private readonly sink: TarSink) {}

  /** Whether the end-of-archive marker was read: what follows is padding. */
  get ended(): boolean {
    return this.state === 'end';
  }

  push(chunk: Buffer): void {
    let off = 0;
    while (off < chunk.length) {
      if (this.state === 'end') {
        off = chunk.length; // trailing zero blocks or record padding
        break;
      }
      if (this.state === 'header') {
        const take = Math.min(BLOCK - this.hdrFill, chunk.length - off);
        chunk.copy(this.hdr, this.hdrFill, off, off + take);
        this.hdrFill += take;
        off += take;
        if (this.hdrFill === BLOCK) {
          this.hdrFill = 0;
          this.header();
        }
        continue;
      }
      if (this.state === 'data') {
        const take = Math.min(this.remaining, chunk.length - off);
        const piece = chunk.subarray(off, off + take);
        if (this.meta) this.meta.parts.push(Buffer.from(piece));
        else this.sink.data(piece);
        this.remaining -= take;
        off += take;
        if (this.remaining === 0) this.finishData();
        continue;
      }
      const take = Math.min(this.padRemaining, chunk.length - off);
      this.padRemaining -= take;
      off += take;
      if (this.padRemaining === 0) this.state = 'header';
    }
    this.offset += chunk.length;
  }

  end(): void {
    if (this.state === 'end') return;
    if (this.state === 'header' && this.hdrFill === 0 && !this.meta) return; // EOF at an entry boundary
    throw bad('unexpected end of archive');
  }

  private header(): void {
    const h = this.hdr;
    if (h.every((b) => b === 0)) {
      this.state = 'end';
      return;
    }
    if (!tarChecksumOk(h)) throw bad('header checksum mismatch (not a tar archive?)');
    const typeflag = String.fromCharCode(h[156]!);
    const size = numeric(h, 124, 12);
    if (typeflag === 'x' || typeflag === 'g' || typeflag === 'L' || typeflag === 'K') {
      if (size > MAX_META) throw bad(`metadata entry of ${size} bytes`);
      this.meta = { type: typeflag, parts: [], size };
      this.startData(size);
      return;
    }
    if (typeflag === 'S') throw bad('GNU sparse entries are not supported');
    const magic = h.toString('latin1', 257, 263);
    let name = cstring(h, 0, 100);
    if (magic === 'ustar\0') {
      const prefix = cstring(h, 345, 155);
      if (prefix) name = `${prefix}/${name}`;
    }
    const pax = { ...this.globalPax, ...this.nextPax };
    this.nextPax = {};
    if (this.longName !== null) name = this.longName;
    if (pax.path !== undefined) name = pax.path;
    let linkname = cstring(h, 157, 100);
    if (this.longLink !== null) linkname = this.longLink;
    if (pax.linkpath !== undefined) linkname = pax.linkpath;
    this.longName = null;
    this.longLink = null;
    const num = (key: string, fallback: number) => (pax[key] !== undefined ? Number(pax[key]) : fallback);
    const header: TarHeader = {
      name,
      kind: kindOf(typeflag, name),
      typeflag,
      mode: numeric(h, 100, 8) & 0o7777,
      uid: num('uid', numeric(h, 108, 8)),
      gid: num('gid', numeric(h, 116, 8)),
      size: HEADER_ONLY.has(typeflag) ? 0 : num('size', size),
      mtime: Math.floor(num('mtime', numeric(h, 136, 12))),
      linkname,
      uname: pax.uname ?? cstring(h, 265, 32),
      gname: pax.gname ?? cstring(h, 297, 32),
      devmajor: numeric(h, 329, 8),
      devminor: numeric(h, 337, 8),
      pax,
    };
    if (!Number.isSafeInteger(header.size) || header.size < 0) throw bad(`bad size for ${JSON.stringify(name)}`);
    this.sink.entry(header);
    this.startData(header.size);
  }

  private startData(size: number): void {
    this.remaining = size;
    this.padRemaining = tarPadding(size);
    if (size === 0) this.finishData();
    else this.state = 'data';
  }

  private finishData(): void {
    const meta = this.meta;
    if (meta) {
      this.meta = null;
      const body = Buffer.concat(meta.parts);
      if (meta.type === 'x') this.nextPax = parsePax(body);
      else if (meta.type === 'g') this.globalPax = { ...this.globalPax, ...parsePax(body) };
      else if (meta.type === 'L') this.longName = cstring(body, 0, body.length);
      else this.longLink = cstring(body, 0, body.length);
    } else {
      this.sink.entryEnd();
    }
    this.state = this.padRemaining ? 'pad' : 'header';
  }
}

export interface TarEntryReader {
  header: TarHeader;
  /** The entry's content; whatever is left unread is skipped when the next entry is requested. */
  body: AsyncIterable<Buffer>;
}

type Event = { k: 'entry'; h: TarHeader } | { k: 'data'; c: Buffer } | { k: 'end' };

/** Entries of a tar stream, one at a time, bodies streamed (nothing is buffered beyond one chunk). */
export async function* readTar(
  source: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  opts: { stopAtEnd?: boolean } = {},
): AsyncGenerator<TarEntryReader> {
  const events: Event[] = [];
  const parser = new TarParser({
    entry: (h) => events.push({ k: 'entry', h }),
    data: (c) => events.push({ k: 'data', c }),
    entryEnd: () => events.push({ k: 'end' }),
  });
  const it: AsyncIterator<Uint8Array> | Iterator<Uint8Array> =
    Symbol.asyncIterator in source ? source[Symbol.asyncIterator]() : source[Symbol.iterator]();
  let exhausted = false;
  const fill = async (): Promise<boolean> => {
    if (exhausted) return false;
    // stopAtEnd: nothing after the end-of-archive marker is read (an empty tar padded with
    // gigabytes of zeros costs no more than the marker); Go's tar reader stops there too.
    if (opts.stopAtEnd && parser.ended) return false;
    const r = await it.next();
    if (r.done) {
      exhausted = true;
      parser.end();
    } else {
      parser.push(Buffer.isBuffer(r.value) ? r.value : Buffer.from(r.value.buffer, r.value.byteOffset, r.value.byteLength));
    }
    return true;
  };
  const next = async (): Promise<Event | null> => {
    while (!events.length) if (!(await fill())) return null;
    return events.shift()!;
  };
  try {
    for (;;) {
      const ev = await next();
      if (!ev) return;
      if (ev.k !== 'entry') continue; // the rest of an entry the consumer did not read
      let finished = false;
      const body = {
        async *[Symbol.asyncIterator]() {
          while (!finished) {
            const e = await next();
            if (!e) throw bad('unexpected end of archive');
            if (e.k === 'end') finished = true;
            else if (e.k === 'data') yield e.c;
          }
        },
      };
      yield { header: ev.h, body };
      while (!finished) {
        const e = await next();
        if (!e) throw bad('unexpected end of archive');
        if (e.k === 'end') finished = true;
      }
    }
  } finally {
    await it.return?.();
  }
}

// ---- path rules ------------------------------------------------------------------------------

/**
 * The entry's path relative to the archive root ('' for the root itself). Absolute names and `..`
 * components are refused: such entries would land outside the directory they are unpacked into.
 */
export function safeEntryPath(name: string): string {
  if (name.startsWith('/')) throw bad(`entry ${JSON.stringify(name)} has an absolute path`);
  const parts = name.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.includes('..')) throw bad(`entry ${JSON.stringify(name)} escapes the archive root`);
  return parts.join('/');
}

/**
 * The entry's path as an unpack inside a chroot of the root sees it (dockerd unpacks a build
 * context that way): the name is cleaned as if absolute, so `../a` and `/a` both land at `a`, and
 * nothing can leave the root.
 */
export function rootedEntryPath(name: string): string {
  return posix.normalize(`/${name}`).slice(1).replace(/\/$/, '');
}

/** Where a symlink at `entryPath` pointing to `target` leads, relative to the root; null if it leaves. */
export function resolveLinkTarget(entryPath: string, target: string): string | null {
  const joined = posix.normalize(posix.join(posix.dirname(entryPath), target));
  if (joined === '..' || joined.startsWith('../')) return null;
  return joined === '.' ? '' : joined.replace(/\/$/, '');
}

/**
 * Checks the entries of one archive against the root: names, hard links, symlinks, and entries
 * placed beneath a symlink of the same archive (which would be written through the link).
 * `absoluteSymlinks`: a layer may hold absolute symlinks (they resolve inside the container's
 * root); an archive of files for the daemon itself (docker save) may not.
 */
export class TarPathGuard {
  private readonly symlinks = new Set<string>();

  /**
   * `rooted`: names and hard links' targets are cleaned as inside a chroot of the root
   * (rootedEntryPath) instead of refused, and relative symlinks may lead out (they are stored as
   * they are; whoever follows them resolves them inside the root) — dockerd's build context.
   */
  constructor(private readonly opts: { absoluteSymlinks: boolean; rooted?: boolean }) {}

  /** The path an entry (or a hard link's target) is written at, relative to the root. */
  entryPath(name: string): string {
    return this.opts.rooted ? rootedEntryPath(name) : safeEntryPath(name);
  }

  check(h: TarHeader): string {
    const path = this.entryPath(h.name);
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      if (this.symlinks.has(parts.slice(0, i).join('/'))) throw bad(`entry ${JSON.stringify(h.name)} is beneath a symlink`);
    }
    if (h.kind === 'link') {
      if (!this.opts.rooted && (h.linkname.startsWith('/') || h.linkname.split('/').includes('..')))
        throw bad(`hard link ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} points outside the archive`);
    } else if (h.kind === 'symlink') {
      if (h.linkname.startsWith('/')) {
        if (!this.opts.absoluteSymlinks) throw bad(`symlink ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} is absolute`);
      } else if (!this.opts.rooted && resolveLinkTarget(path, h.linkname) === null) {
        throw bad(`symlink ${JSON.stringify(h.name)} -> ${JSON.stringify(h.linkname)} points outside the archive`);
      }
      this.symlinks.add(path);
    } else {
      this.symlinks.delete(path); // a later entry replaces the link
    }
    return path;
  }
}
