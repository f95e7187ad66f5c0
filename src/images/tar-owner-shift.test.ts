import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { tarToBuffer } from '../util/tar-writer.ts';
import { readTar } from './tar-reader.ts';
import { shiftTarOwners } from './tar-owner-shift.ts';

const BASE = 100_000;
// As the remapped range does: ids outside it are the overflow id (a header whose real id is in a
// PAX record holds 0 there).
const back = (id: number) => (id >= BASE ? id - BASE : 65534);
const map = { uid: back, gid: back };

async function shifted(tar: Buffer, step: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for (let i = 0; i < tar.length; i += step) chunks.push(tar.subarray(i, i + step));
  const out: Buffer[] = [];
  for await (const c of shiftTarOwners(
    (async function* () {
      yield* chunks;
    })(),
    map,
  ))
    out.push(c);
  return Buffer.concat(out);
}

test('owners are mapped back; names, data, links, xattrs and long names pass through', async () => {
  const long = `dir/${'n'.repeat(150)}`;
  const tar = await tarToBuffer(async (tw) => {
    await tw.directory('dir', { uid: BASE, gid: BASE, mode: 0o755 });
    await tw.entry({ name: 'dir/file', uid: BASE + 1000, gid: BASE + 1001, size: 5 }, Buffer.from('hello'));
    await tw.entry({ name: long, uid: BASE + 7, gid: BASE + 8, size: 1000, pax: { 'SCHILY.xattr.user.k': 'v' } }, Buffer.alloc(1000, 7));
    await tw.entry({ name: 'dir/.wh.gone', uid: BASE, gid: BASE, size: 0 }, Buffer.alloc(0));
    await tw.symlink('dir/link', 'file', { uid: BASE + 2, gid: BASE + 3 });
    // ids past the 7 octal digits of the header: written as PAX records
    await tw.entry({ name: 'big', uid: BASE + 3_000_000, gid: BASE + 3_000_001, size: 2 }, Buffer.from('hi'));
  });
  for (const step of [1, 100, 512, 4096, tar.length]) {
    const out = await shifted(tar, step);
    const got: Array<[string, number, number, string]> = [];
    for await (const e of readTar([out])) {
      const data: Buffer[] = [];
      for await (const c of e.body) data.push(c);
      got.push([e.header.name, e.header.uid, e.header.gid, Buffer.concat(data).toString('hex').slice(0, 10)]);
      if (e.header.name === long) assert.equal(e.header.pax['SCHILY.xattr.user.k'], 'v');
    }
    assert.deepEqual(got, [
      ['dir/', 0, 0, ''],
      ['dir/file', 1000, 1001, Buffer.from('hello').toString('hex')],
      [long, 7, 8, '0707070707'],
      ['dir/.wh.gone', 0, 0, ''],
      ['dir/link', 2, 3, ''],
      ['big', 3_000_000, 3_000_001, Buffer.from('hi').toString('hex')],
    ]);
  }
  // GNU tar agrees (checksums, sizes, owners).
  const dir = mkdtempSync(join(tmpdir(), 'engine-shift-'));
  try {
    writeFileSync(join(dir, 'l.tar'), await shifted(tar, 777));
    const r = spawnSync('tar', ['-tvf', join(dir, 'l.tar'), '--numeric-owner'], { encoding: 'utf8' });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /1000\/1001\s+5 .* dir\/file/);
    assert.match(r.stdout, /3000000\/3000001\s+2 .* big/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a truncated tar is an error', async () => {
  const tar = await tarToBuffer(async (tw) => {
    await tw.entry({ name: 'f', size: 2000 }, Buffer.alloc(2000));
  });
  await assert.rejects(shifted(tar.subarray(0, 1024), 512), /truncated tar stream/);
});
