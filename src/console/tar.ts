// The little of tar the files view needs: a ustar writer for uploads (PUT /containers/{id}/archive)
// and a header reader that lists the direct children of a directory from GET .../archive, whose
// answer holds the directory whole (the reader skips file contents). Pure.

const BLOCK = 512;
const enc = new TextEncoder();
const dec = new TextDecoder();

function octal(n: number, width: number): string {
  return n.toString(8).padStart(width - 1, '0') + '\0';
}

function header(name: string, size: number, mode: number, mtime: number, type: string): Uint8Array {
  const h = new Uint8Array(BLOCK);
  const put = (s: string, off: number, len: number) => h.set(enc.encode(s).subarray(0, len), off);
  let prefix = '';
  let base = name;
  if (enc.encode(name).length > 100) {
    const cut = name.lastIndexOf('/', name.length - 1);
    if (cut <= 0 || cut > 155 || name.length - cut - 1 > 100) throw new Error(`file name too long for tar: ${name}`);
    prefix = name.slice(0, cut);
    base = name.slice(cut + 1);
  }
  put(base, 0, 100);
  put(octal(mode, 8), 100, 8);
  put(octal(0, 8), 108, 8);
  put(octal(0, 8), 116, 8);
  put(octal(size, 12), 124, 12);
  put(octal(Math.floor(mtime), 12), 136, 12);
  put('        ', 148, 8);
  put(type, 156, 1);
  put('ustar\u000000', 257, 8);
  put(prefix, 345, 155);
  let sum = 0;
  for (const b of h) sum += b;
  put(octal(sum, 7) + ' ', 148, 8);
  return h;
}

/** A tar of regular files (names relative, '/' separated); directories of the names are not added. */
export function writeTar(files: Array<{ name: string; data: Uint8Array; mode?: number; mtime?: number }>): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const f of files) {
    parts.push(header(f.name, f.data.length, f.mode ?? 0o644, f.mtime ?? Date.now() / 1000, '0'));
    parts.push(f.data);
    const pad = (BLOCK - (f.data.length % BLOCK)) % BLOCK;
    if (pad) parts.push(new Uint8Array(pad));
  }
  parts.push(new Uint8Array(BLOCK * 2));
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

export interface TarEntry {
  name: string; // path inside the tar, without a trailing '/'
  type: 'file' | 'dir' | 'link' | 'symlink' | 'other';
  size: number;
  mode: number;
  mtime: number;
  linkname: string;
}

function cstr(b: Uint8Array, off: number, len: number): string {
  const s = b.subarray(off, off + len);
  const z = s.indexOf(0);
  return dec.decode(z < 0 ? s : s.subarray(0, z));
}
function num(b: Uint8Array, off: number, len: number): number {
  const t = cstr(b, off, len).trim();
  return t ? parseInt(t, 8) : 0;
}

/** Push reader of tar headers: feed chunks, get entries; contents are skipped, never kept. */
export class TarLister {
  private pending = new Uint8Array(0);
  private skip = 0;
  private longName: string | null = null;
  private collectLong = 0;
  private longBuf: Uint8Array[] = [];
  ended = false;

  push(chunk: Uint8Array): TarEntry[] {
    const out: TarEntry[] = [];
    let buf = chunk;
    if (this.pending.length) {
      buf = new Uint8Array(this.pending.length + chunk.length);
      buf.set(this.pending);
      buf.set(chunk, this.pending.length);
    }
    let off = 0;
    while (!this.ended) {
      if (this.skip > 0) {
        const n = Math.min(this.skip, buf.length - off);
        if (this.collectLong > 0) this.longBuf.push(buf.slice(off, off + Math.min(n, this.collectLong)));
        this.collectLong = Math.max(0, this.collectLong - n);
        if (this.collectLong === 0 && this.longBuf.length) {
          this.longName = cstr(concat(this.longBuf), 0, Number.MAX_SAFE_INTEGER);
          this.longBuf = [];
        }
        this.skip -= n;
        off += n;
        if (this.skip > 0) break;
      }
      if (buf.length - off < BLOCK) break;
      const h = buf.subarray(off, off + BLOCK);
      off += BLOCK;
      if (h.every((b) => b === 0)) {
        this.ended = true;
        break;
      }
      const size = num(h, 124, 12);
      const flag = String.fromCharCode(h[156]!);
      const padded = Math.ceil(size / BLOCK) * BLOCK;
      if (flag === 'L') {
        this.skip = padded;
        this.collectLong = size;
        continue;
      }
      if (flag === 'x' || flag === 'g') {
        this.skip = padded; // pax headers: long names there are rare in container trees; skipped
        continue;
      }
      const prefix = cstr(h, 345, 155);
      let name = this.longName ?? (prefix ? `${prefix}/${cstr(h, 0, 100)}` : cstr(h, 0, 100));
      this.longName = null;
      name = name.replace(/\/+$/, '');
      const type =
        flag === '5' ? 'dir' : flag === '0' || flag === '\0' ? 'file' : flag === '2' ? 'symlink' : flag === '1' ? 'link' : 'other';
      out.push({ name, type, size: type === 'file' ? size : 0, mode: num(h, 100, 8), mtime: num(h, 136, 12), linkname: cstr(h, 157, 100) });
      this.skip = padded;
    }
    this.pending = buf.slice(off);
    return out;
  }
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((n, p) => n + p.length, 0));
  let off = 0;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}
