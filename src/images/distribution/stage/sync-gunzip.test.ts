// The synchronous gunzip of the stage workers: the same bytes as zlib's own gunzip for any split of
// the input (single and multi-member gzip, incompressible and compressible data), and the errors
// a stream would raise for a stream cut short, a bad CRC and bytes that are not gzip.
import assert from 'node:assert/strict';
import { createHash, randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { SyncGunzip } from './sync-gunzip.ts';

const sha = (b: Uint8Array) => createHash('sha256').update(b).digest('hex');

function inflate(gz: Buffer, step: number): { digest: string; size: number } {
  const g = SyncGunzip.create(64 * 1024);
  assert.ok(g, "this Node's zlib has the synchronous handle");
  const h = createHash('sha256');
  let size = 0;
  const out = (b: Buffer) => {
    h.update(b);
    size += b.length;
  };
  try {
    for (let off = 0; off < gz.length; off += step) g.write(gz.subarray(off, off + step), false, out);
    g.write(Buffer.alloc(0), true, out);
  } finally {
    g.close();
  }
  return { digest: h.digest('hex'), size };
}

test('inflates what gzip made, whatever the chunking, members concatenated too', () => {
  const inputs = [randomBytes(3 << 20), Buffer.alloc(5 << 20), Buffer.from('hello layer '.repeat(200_000))];
  for (const data of inputs) {
    const members = Buffer.concat([gzipSync(data.subarray(0, 1000)), gzipSync(data.subarray(1000), { level: 1 })]);
    for (const gz of [gzipSync(data), members]) {
      for (const step of [1, 777, 64 * 1024, 1 << 20]) {
        if (step === 1 && gz.length > 200_000) continue; // byte by byte only where it is quick
        assert.deepEqual(inflate(gz, step), { digest: sha(data), size: data.length }, `step ${step}`);
      }
    }
  }
});

test('a stream cut short, a bad CRC and non-gzip bytes throw', () => {
  const gz = gzipSync(randomBytes(100_000));
  assert.throws(() => inflate(gz.subarray(0, gz.length - 10), 4096), /unexpected end of file/);
  const bad = Buffer.from(gz);
  bad[gz.length - 6]! ^= 1; // in the CRC32 of the trailer
  assert.throws(() => inflate(bad, 4096), /incorrect data check/);
  assert.throws(() => inflate(Buffer.from('not gzip at all'), 4096), /incorrect header check/);
});
