// Rewrites the owners in a tar stream and keeps every other byte: the uid/gid fields of each entry's
// header (octal or GNU base-256) with their checksum, and the uid/gid records of PAX extended
// headers (rebuilt, since a record's length may change). Used by commit under --userns-remap: the
// writable layer's files are owned by remapped host ids on disk, and the image layer must hold the
// ids the container sees (dockerd stores image layers unmapped too). Names, modes, xattrs,
// whiteouts and data pass through untouched.

import { readTarNumber, setTarChecksum, TAR_BLOCK, tarPadding, writeTarNumber } from '../wire/tar-header.ts';

export interface OwnerMap {
  uid(id: number): number;
  gid(id: number): number;
}

const BLOCK = TAR_BLOCK;
const pad = tarPadding;
const readNumber = (h: Buffer, off: number, len: number): number => readTarNumber(h, off, len) ?? 0;
const writeNumber = writeTarNumber;
const setChecksum = setTarChecksum;

/** Rebuilds PAX records ("<len> key=value\n") with uid and gid mapped. */
function shiftPax(data: Buffer, map: OwnerMap): Buffer {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos < data.length) {
    const sp = data.indexOf(0x20, pos);
    if (sp < 0) break;
    const len = parseInt(data.subarray(pos, sp).toString('latin1'), 10);
    if (!Number.isFinite(len) || len <= 0) break;
    const record = data.subarray(pos, pos + len);
    const body = data.subarray(sp + 1, pos + len - 1); // key=value, without the newline
    pos += len;
    const eq = body.indexOf(0x3d);
    const key = eq < 0 ? '' : body.subarray(0, eq).toString('utf8');
    if (key !== 'uid' && key !== 'gid') {
      out.push(record);
      continue;
    }
    const id = Number(body.subarray(eq + 1).toString('latin1'));
    const kv = `${key}=${key === 'uid' ? map.uid(id) : map.gid(id)}\n`;
    // The length counts its own digits.
    let n = kv.length + 2;
    while (`${n} ${kv}`.length !== n) n = `${n} ${kv}`.length;
    out.push(Buffer.from(`${n} ${kv}`, 'latin1'));
  }
  if (pos < data.length) out.push(data.subarray(pos));
  return Buffer.concat(out);
}

/** The tar with owners mapped; header and data blocks stream through. */
export async function* shiftTarOwners(source: AsyncIterable<Uint8Array>, map: OwnerMap): AsyncGenerator<Buffer> {
  let buf: Buffer = Buffer.alloc(0);
  /** Bytes of entry data (with padding) still to pass through. */
  let passthrough = 0;
  /** A PAX header waiting for its data: the header block and the bytes to collect. */
  let pax: { header: Buffer; size: number } | undefined;
  let ended = false;
  for await (const chunk of source) {
    buf = buf.length ? Buffer.concat([buf, chunk]) : Buffer.from(chunk);
    const out: Buffer[] = [];
    for (;;) {
      if (ended) {
        out.push(buf);
        buf = Buffer.alloc(0);
        break;
      }
      if (passthrough > 0) {
        const n = Math.min(passthrough, buf.length);
        if (n === 0) break;
        out.push(buf.subarray(0, n));
        buf = buf.subarray(n);
        passthrough -= n;
        continue;
      }
      if (pax) {
        const total = pax.size + pad(pax.size);
        if (buf.length < total) break;
        const data = shiftPax(buf.subarray(0, pax.size), map);
        buf = buf.subarray(total);
        const h = Buffer.from(pax.header);
        writeNumber(h, 124, 12, data.length);
        setChecksum(h);
        out.push(h, data, Buffer.alloc(pad(data.length)));
        pax = undefined;
        continue;
      }
      if (buf.length < BLOCK) break;
      const h = Buffer.from(buf.subarray(0, BLOCK));
      buf = buf.subarray(BLOCK);
      if (h.every((b) => b === 0)) {
        // The end-of-archive blocks: the rest goes as it is.
        out.push(h);
        ended = true;
        continue;
      }
      const type = String.fromCharCode(h[156]!);
      const size = readNumber(h, 124, 12);
      if (type === 'x') {
        pax = { header: h, size };
        continue;
      }
      // GNU long names and global PAX headers describe no file: their ids are left as they are.
      if (type !== 'L' && type !== 'K' && type !== 'g') {
        writeNumber(h, 108, 8, map.uid(readNumber(h, 108, 8)));
        writeNumber(h, 116, 8, map.gid(readNumber(h, 116, 8)));
        setChecksum(h);
      }
      out.push(h);
      // Links, directories and devices carry no data whatever their size field says (as GNU tar).
      const hasData = !['1', '2', '3', '4', '5', '6'].includes(type);
      passthrough = hasData ? size + pad(size) : 0;
    }
    if (out.length) yield out.length === 1 ? out[0]! : Buffer.concat(out);
  }
  if (pax || passthrough > 0 || (!ended && buf.length)) throw new Error('truncated tar stream');
}
