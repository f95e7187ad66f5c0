// decompressed(): each compression sniffed and undone; a reader that stops early leaves nothing behind.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { decompressed } from './decompress.ts';

async function* chunks(b: Buffer, size = 4096): AsyncGenerator<Buffer> {
  for (let i = 0; i < b.length; i += size) yield b.subarray(i, i + size);
}

function compress(tool: string, data: Buffer): Buffer {
  const out = spawnSync(tool, ['-c'], { input: data, maxBuffer: 64 << 20 });
  assert.equal(out.status, 0, `${tool} is not installed (scripts/setup.sh DEB_RUNTIME)`);
  return out.stdout;
}

const data = randomBytes(1 << 20);

for (const [kind, packed] of [
  ['plain', () => data],
  ['gzip', () => gzipSync(data)],
  ['bzip2', () => compress('bzip2', data)],
  ['xz', () => compress('xz', data)],
] as const) {
  test(`${kind}: the bytes come back`, async () => {
    const parts: Buffer[] = [];
    for await (const c of decompressed(chunks(packed()))) parts.push(c);
    assert.ok(Buffer.concat(parts).equals(data));
  });
}

for (const tool of ['bzip2', 'xz']) {
  test(`${tool}: a reader that stops after the first chunk kills the tool without an error left behind`, async () => {
    const rejections: unknown[] = [];
    const onRejection = (err: unknown) => rejections.push(err);
    process.on('unhandledRejection', onRejection);
    try {
      for await (const c of decompressed(chunks(compress(tool, data)))) {
        assert.ok(c.length > 0);
        break;
      }
      // The tool's exit after the kill, and any rejection it brings, come within a few turns.
      await new Promise((r) => setTimeout(r, 300));
      assert.deepEqual(rejections, []);
    } finally {
      process.off('unhandledRejection', onRejection);
    }
  });
}
