// Tests of the entry file writer: bodies smaller and larger than its buffer, chunks that straddle
// a flush, empty bodies, and one writer reused for several files (nothing of one leaks into the next).
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { closeSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';
import { EntryFileWriter } from './tar-disk.ts';

const dir = mkdtempSync(`${tmpdir()}/tar-disk-test-`);
after(() => rmSync(dir, { recursive: true, force: true }));

async function* chunks(data: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let off = 0; off < data.length; off += size) yield data.subarray(off, off + size);
}

async function writeTo(w: EntryFileWriter, name: string, data: Buffer, chunk: number): Promise<number> {
  const fd = openSync(`${dir}/${name}`, 'w');
  try {
    return await w.write(fd, chunks(data, chunk));
  } finally {
    closeSync(fd);
  }
}

test('bodies of any size and chunking arrive whole, through one reused writer', async () => {
  const w = new EntryFileWriter();
  const cases: Array<[string, Buffer, number]> = [
    ['big', randomBytes((5 << 20) / 2 + 123), 65_536 + 7], // chunks straddle the 1 MiB flushes
    ['small', randomBytes(1000), 300],
    ['empty', Buffer.alloc(0), 10],
    ['exact', randomBytes(1 << 20), 1 << 20],
    ['one-chunk-larger-than-the-buffer', randomBytes((1 << 20) * 2 + 5), (1 << 20) * 2 + 5],
  ];
  for (const [name, data, chunk] of cases) {
    assert.equal(await writeTo(w, name, data, chunk), data.length, name);
    assert.ok(readFileSync(`${dir}/${name}`).equals(data), name);
  }
});

test('a failing body leaves the writer usable for the next file', async () => {
  const w = new EntryFileWriter();
  const fd = openSync(`${dir}/failed`, 'w');
  async function* failing(): AsyncGenerator<Buffer> {
    yield randomBytes(5000);
    throw new Error('cut');
  }
  await assert.rejects(w.write(fd, failing()), /cut/);
  closeSync(fd);
  const data = randomBytes(3000);
  await writeTo(w, 'next', data, 1000);
  assert.ok(readFileSync(`${dir}/next`).equals(data));
});
