// The fast DEFLATE round-trips through Node's zlib (gunzip, inflate, inflateRaw) for text, binary,
// repetitive and random inputs of every size up to past the window, and compresses GELF-like JSON.

import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { describe, it } from 'node:test';
import { gunzipSync, inflateRawSync, inflateSync } from 'node:zlib';
import { deflateRawFast, gzipFast, zlibFast } from './fast-deflate.ts';

describe('fast deflate', () => {
  const inputs: Buffer[] = [
    Buffer.alloc(0),
    Buffer.from('a'),
    Buffer.from('abcd'),
    Buffer.from('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'),
    Buffer.alloc(1000, 0),
    Buffer.alloc(70_000, 'xyz'),
    Buffer.from('{"version":"1.1","host":"h","short_message":"hello world","_container_id":"abc","_container_name":"web"}'.repeat(20)),
    Buffer.from('é✓ "quoted" <tag> & \\ tab\t'.repeat(50)),
  ];
  for (let n = 0; n < 300; n++) inputs.push(randomBytes(n * 7));
  for (let n = 0; n < 50; n++) {
    // repetitive with random patches: many matches at many distances and lengths
    const b = Buffer.alloc(100 + n * 997);
    for (let i = 0; i < b.length; i++) b[i] = 97 + ((i * 31) % (3 + (n % 11)));
    randomBytes(Math.min(40, b.length)).copy(b, (n * 13) % (b.length - 40));
    inputs.push(b);
  }
  inputs.push(randomBytes(100_000), Buffer.concat([randomBytes(40_000), randomBytes(40_000)]));

  it('round-trips through zlib in raw, gzip and zlib framing', () => {
    for (const src of inputs) {
      assert.ok(inflateRawSync(deflateRawFast(src)).equals(src), `raw ${src.length}`);
      assert.ok(gunzipSync(gzipFast(src)).equals(src), `gzip ${src.length}`);
      assert.ok(inflateSync(zlibFast(src)).equals(src), `zlib ${src.length}`);
    }
  });

  it('compresses repetitive JSON', () => {
    const json = Buffer.from(
      `{"short_message":"${'x'.repeat(99)}","_container_id":"${'c'.repeat(64)}","_image_id":"sha256:${'a'.repeat(64)}"}`,
    );
    assert.ok(gzipFast(json).length < json.length / 2, `${gzipFast(json).length} of ${json.length}`);
  });
});
