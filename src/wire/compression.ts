// Which compression a stream uses, from its first bytes (the magic numbers dockerd's
// archive.DetectCompression reads): image load and import, layer media types, remote build
// contexts and ADD archives all ask here.

export type Compression = 'none' | 'gzip' | 'zstd' | 'bzip2' | 'xz';

/** The number of leading bytes sniffCompression needs at most. */
export const COMPRESSION_MAGIC_SIZE = 6;

const XZ = [0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00];

export function sniffCompression(head: Uint8Array): Compression {
  if (head.length >= 2 && head[0] === 0x1f && head[1] === 0x8b) return 'gzip';
  if (head.length >= 4 && head[0] === 0x28 && head[1] === 0xb5 && head[2] === 0x2f && head[3] === 0xfd) return 'zstd';
  if (head.length >= 3 && head[0] === 0x42 && head[1] === 0x5a && head[2] === 0x68) return 'bzip2'; // "BZh"
  if (head.length >= 6 && XZ.every((b, i) => head[i] === b)) return 'xz';
  return 'none';
}
