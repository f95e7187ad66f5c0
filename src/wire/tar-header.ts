// The tar header block, read and written in one place: the numeric fields (octal, or GNU base-256
// when a value does not fit), the checksum (unsigned sum, the signed one of old writers accepted),
// NUL-terminated strings, and PAX records. The streaming reader (images/tar-reader.ts), the writer
// (util/tar-writer.ts), the owner rewriter (images/tar-owner-shift.ts) and the archive sniffers
// use these; none parses a header field by itself.

/** A tar block: headers and data padding come in these. */
export const TAR_BLOCK = 512;

/** Padding after `size` bytes of entry data. */
export const tarPadding = (size: number): number => (TAR_BLOCK - (size % TAR_BLOCK)) % TAR_BLOCK;

/** A NUL-terminated string field. */
export function tarString(b: Buffer, off: number, len: number): string {
  const field = b.subarray(off, off + len);
  const nul = field.indexOf(0);
  return (nul < 0 ? field : field.subarray(0, nul)).toString('utf8');
}

/** A numeric field: octal text (NULs and spaces around it ignored), or GNU base-256; undefined if neither. */
export function readTarNumber(b: Buffer, off: number, len: number): number | undefined {
  const field = b.subarray(off, off + len);
  if (field[0]! & 0x80) {
    // GNU base-256: big-endian, the top bit of the first byte is the marker.
    let n = field[0]! & 0x7f;
    for (let i = 1; i < field.length; i++) n = n * 256 + field[i]!;
    return n;
  }
  const s = field.toString('latin1').replace(/\0.*$/s, '').trim();
  if (!s) return 0;
  return /^[0-7]+$/.test(s) ? parseInt(s, 8) : undefined;
}

/** Writes a numeric field: zero-padded octal with a NUL when it fits, else GNU base-256. */
export function writeTarNumber(h: Buffer, off: number, len: number, v: number): void {
  const octal = v.toString(8);
  if (octal.length <= len - 1) {
    h.write(octal.padStart(len - 1, '0') + '\0', off, len, 'latin1');
    return;
  }
  let x = BigInt(v);
  for (let i = len - 1; i >= 1; i--) {
    h[off + i] = Number(x & 0xffn);
    x >>= 8n;
  }
  h[off] = 0x80;
}

/** Whether the stored checksum matches the block (the unsigned sum, or the signed one). */
export function tarChecksumOk(h: Buffer): boolean {
  const stored = readTarNumber(h, 148, 8);
  if (stored === undefined) return false;
  let unsigned = 0;
  let signed = 0;
  for (let i = 0; i < TAR_BLOCK; i++) {
    const v = i >= 148 && i < 156 ? 0x20 : h[i]!;
    unsigned += v;
    signed += v > 127 ? v - 256 : v;
  }
  return stored === unsigned || stored === signed;
}

/** Computes and stores the checksum (six octal digits, NUL, space: what GNU tar and Go write). */
export function setTarChecksum(h: Buffer): void {
  h.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < TAR_BLOCK; i++) sum += h[i]!;
  h.write(sum.toString(8).padStart(6, '0') + '\0 ', 148, 8, 'latin1');
}

/** Whether a block is a tar header: not the end-of-archive zeros, and its checksum holds. */
export function isTarHeader(h: Buffer): boolean {
  return h.length >= TAR_BLOCK && !h.subarray(0, TAR_BLOCK).every((b) => b === 0) && tarChecksumOk(h);
}

/** A PAX record, `<length> key=value\n`, whose length counts its own digits. */
export function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const bodyLen = Buffer.byteLength(body);
  let len = bodyLen + String(bodyLen).length;
  if (String(len).length !== String(bodyLen).length) len = bodyLen + String(len).length;
  return `${len}${body}`;
}

/** PAX records into a map; undefined when the data is not a list of records. */
export function parsePaxRecords(body: Buffer): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  let off = 0;
  while (off < body.length) {
    const sp = body.indexOf(0x20, off);
    if (sp < 0) return undefined;
    const len = Number(body.toString('latin1', off, sp));
    if (!Number.isInteger(len) || len <= 0 || off + len > body.length) return undefined;
    const rec = body.toString('utf8', sp + 1, off + len - 1); // without the trailing newline
    const eq = rec.indexOf('=');
    if (eq < 0) return undefined;
    out[rec.slice(0, eq)] = rec.slice(eq + 1);
    off += len;
  }
  return out;
}
