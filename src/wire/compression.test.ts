// Compression sniffing on real compressed bytes (Node's gzip and zstd) and on the other magics.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import zlib from 'node:zlib';
import { sniffCompression } from './compression.ts';

test('each compression is told by its magic; anything else, or too few bytes, is none', () => {
  assert.equal(sniffCompression(zlib.gzipSync('x')), 'gzip');
  assert.equal(sniffCompression(zlib.zstdCompressSync('x')), 'zstd');
  assert.equal(sniffCompression(Buffer.from('BZh91AY&SY')), 'bzip2');
  assert.equal(sniffCompression(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00, 0x00])), 'xz');
  assert.equal(sniffCompression(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a])), 'none');
  assert.equal(sniffCompression(Buffer.from([0x1f])), 'none');
  assert.equal(sniffCompression(Buffer.alloc(512)), 'none');
});
