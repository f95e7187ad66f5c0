import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PassThrough } from 'node:stream';
import { buildHeader, paxRecord, tarToBuffer, TarWriter } from './tar-writer.ts';

const MTIME = 1700000000;

async function withTmp(fn: (dir: string) => Promise<void>): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'tarw-'));
  try {
    await fn(dir);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

/** Reads our own headers back: name, typeflag, size, and checks each checksum. */
function headers(tar: Buffer): { name: string; type: string; size: number; prefix: string }[] {
  const out = [];
  let off = 0;
  while (off + 512 <= tar.length) {
    const h = tar.subarray(off, off + 512);
    if (h.every((b) => b === 0)) break;
    const stored = parseInt(h.subarray(148, 154).toString('ascii'), 8);
    let sum = 0;
    for (let i = 0; i < 512; i++) sum += i >= 148 && i < 156 ? 0x20 : h[i]!;
    assert.equal(stored, sum, 'header checksum');
    assert.equal(h.subarray(257, 265).toString('latin1'), 'ustar\x0000');
    const str = (a: number, b: number) => h.subarray(a, b).toString('utf8').replace(/\0.*$/s, '');
    const size = parseInt(str(124, 136), 8);
    out.push({ name: str(0, 100), type: str(156, 157), size, prefix: str(345, 500) });
    off += 512 + Math.ceil(size / 512) * 512;
  }
  return out;
}

test('PAX records count their own length', () => {
  assert.equal(paxRecord('path', 'a'), '9 path=a\n');
  const r = paxRecord('path', 'x'.repeat(93)); // body 100 → length 103 has 3 digits
  assert.equal(Buffer.byteLength(r), Number(r.split(' ')[0]));
  const r2 = paxRecord('path', 'x'.repeat(88)); // 95 + 2 digits = 97, fine; 96+2=98
  assert.equal(Buffer.byteLength(r2), Number(r2.split(' ')[0]));
  for (let n = 0; n < 1100; n += 7) {
    const rec = paxRecord('k', 'v'.repeat(n));
    assert.equal(Buffer.byteLength(rec), Number(rec.split(' ')[0]), `value length ${n}`);
  }
});

test('header fields and checksum', () => {
  const h = buildHeader({
    name: 'a',
    prefix: '',
    mode: 0o755,
    uid: 1,
    gid: 2,
    size: 10,
    mtime: MTIME,
    typeflag: '0',
    linkname: '',
    uname: 'u',
    gname: 'g',
    devmajor: 0,
    devminor: 0,
  });
  assert.equal(h.length, 512);
  assert.equal(h.subarray(100, 108).toString(), '0000755\0');
  assert.equal(h.subarray(124, 136).toString(), '00000000012\0');
  assert.equal(headers(Buffer.concat([h, Buffer.alloc(512), Buffer.alloc(1024)])).length, 1);
});

test('GNU tar reads back every kind of entry, long and non-ASCII names included', async () => {
  await withTmp(async (dir) => {
    const src = path.join(dir, 'src.bin');
    const big = Buffer.alloc(1_500_000);
    for (let i = 0; i < big.length; i++) big[i] = (i * 7919) & 0xff;
    fs.writeFileSync(src, big);
    const mid = 'd'.repeat(120) + '/' + 'f'.repeat(90); // > 100: fits the ustar prefix/name split
    const huge = 'l/'.repeat(80) + 'end'; // 163 chars, no split leaves name ≤ 100 with prefix ≤ 155? → check either way
    const veryLong = 'v'.repeat(200) + '/' + 'w'.repeat(120); // last part > 100: no ustar split, PAX path
    const longTarget = '/' + 't'.repeat(150);
    const tar = await tarToBuffer(async (tw) => {
      const o = { mtime: MTIME };
      await tw.directory('top', { ...o, mode: 0o755 });
      await tw.directory('top/tmp', { ...o, mode: 0o1777 });
      await tw.file('top/hello.txt', 'hello\n', { ...o, mode: 0o640, uid: 1000, gid: 1001, uname: 'alice', gname: 'staff' });
      await tw.file('top/suid', Buffer.from('x'), { ...o, mode: 0o4755 });
      await tw.fileFromPath('top/big.bin', src, { ...o, mode: 0o600 });
      await tw.symlink('top/link', 'hello.txt', o);
      await tw.symlink('top/longlink', longTarget, o);
      await tw.hardlink('top/hard', 'top/hello.txt', { ...o, mode: 0o640 });
      await tw.file('top/empty', Buffer.alloc(0), o);
      await tw.directory('top/' + mid.split('/')[0], o);
      await tw.file('top/' + mid, 'mid', o);
      await tw.directory('top/l', o);
      let p = 'top/l';
      for (const part of huge.split('/').slice(1, -1)) {
        p += '/' + part;
        await tw.directory(p, o);
      }
      await tw.file('top/' + huge, 'deep', o);
      await tw.directory('top/' + 'v'.repeat(200), o);
      await tw.file('top/' + veryLong, 'long', o);
      await tw.file('top/ünïcödé-名前', 'utf8', o);
      await tw.file('top/bigid', 'id', { ...o, uid: 3_000_000, gid: 4_000_000 });
      await tw.entry({ name: 'top/fifo', type: 'fifo', mode: 0o600, mtime: MTIME });
    });
    assert.equal(tar.length % 512, 0);
    assert.ok(
      tar.subarray(tar.length - 1024).every((b) => b === 0),
      'two zero blocks at the end',
    );
    const hs = headers(tar);
    assert.ok(
      hs.some((h) => h.type === 'x'),
      'PAX headers used',
    );
    const split = hs.find((h) => h.name === 'f'.repeat(90));
    assert.equal(split?.prefix, 'top/' + 'd'.repeat(120), 'ustar prefix split for a 215-char path');

    const listing = execFileSync('tar', ['-tvf', '-', '--numeric-owner', '--full-time'], { input: tar, encoding: 'utf8' });
    assert.match(listing, /^-rw-r----- 1000\/1001\s+6 2023-11-14 22:13:20 top\/hello.txt$/m);
    assert.match(listing, /^-rwsr-xr-x 0\/0\s+1 .* top\/suid$/m);
    assert.match(listing, /^drwxrwxrwt .* top\/tmp\/$/m);
    assert.match(listing, /^hrw-r----- .* top\/hard link to top\/hello.txt$/m);
    assert.match(listing, /^prw------- .* top\/fifo$/m);
    assert.match(listing, /^-rw-r--r-- 3000000\/4000000 .* top\/bigid$/m);

    const out = path.join(dir, 'out');
    fs.mkdirSync(out);
    execFileSync('tar', ['-xf', '-', '-C', out, '--numeric-owner', '--same-permissions', '--same-owner'], { input: tar });
    const t = path.join(out, 'top');
    assert.equal(fs.readFileSync(path.join(t, 'hello.txt'), 'utf8'), 'hello\n');
    assert.ok(fs.readFileSync(path.join(t, 'big.bin')).equals(big));
    assert.equal(fs.statSync(path.join(t, 'big.bin')).mode & 0o7777, 0o600);
    assert.equal(fs.statSync(path.join(t, 'suid')).mode & 0o7777, 0o4755);
    assert.equal(fs.statSync(path.join(t, 'tmp')).mode & 0o7777, 0o1777);
    assert.equal(fs.statSync(path.join(t, 'hello.txt')).uid, 1000);
    assert.equal(fs.statSync(path.join(t, 'bigid')).uid, 3_000_000);
    assert.equal(fs.statSync(path.join(t, 'hello.txt')).mtime.getTime(), MTIME * 1000);
    assert.equal(fs.readlinkSync(path.join(t, 'link')), 'hello.txt');
    assert.equal(fs.readlinkSync(path.join(t, 'longlink')), longTarget);
    assert.equal(fs.statSync(path.join(t, 'hard')).ino, fs.statSync(path.join(t, 'hello.txt')).ino);
    assert.equal(fs.readFileSync(path.join(t, mid), 'utf8'), 'mid');
    assert.equal(fs.readFileSync(path.join(t, huge), 'utf8'), 'deep');
    assert.equal(fs.readFileSync(path.join(t, veryLong), 'utf8'), 'long');
    assert.equal(fs.readFileSync(path.join(t, 'ünïcödé-名前'), 'utf8'), 'utf8');
    assert.equal(fs.statSync(path.join(t, 'empty')).size, 0);
    assert.ok(fs.statSync(path.join(t, 'fifo')).isFIFO());
  });
});

test('streams into a Writable with backpressure, and rejects wrong sizes', async () => {
  const sink = new PassThrough({ highWaterMark: 1024 });
  const chunks: Buffer[] = [];
  const consumed = (async () => {
    for await (const c of sink) {
      chunks.push(c as Buffer);
      await new Promise((r) => setImmediate(r)); // a slow reader
    }
  })();
  const tw = new TarWriter(sink);
  const data = Buffer.alloc(200_000, 7);
  async function* pieces() {
    for (let i = 0; i < data.length; i += 33_333) yield data.subarray(i, i + 33_333);
  }
  await tw.entry({ name: 'f', size: data.length, mtime: MTIME }, pieces());
  await assert.rejects(
    tw.entry(
      { name: 'short', size: 10, mtime: MTIME },
      (async function* () {
        yield Buffer.alloc(5);
      })(),
    ),
    /5 bytes, header says 10/,
  );
  await tw.finish();
  sink.end();
  await consumed;
  const all = Buffer.concat(chunks);
  assert.equal(tw.written, all.length);
  // The failed entry left a header in the stream: callers abort the archive on error. The good entry is intact.
  assert.equal(headers(all)[0]!.size, 200_000);
  assert.ok(all.subarray(512, 512 + data.length).equals(data));
  await assert.rejects(
    tarToBuffer(async (tw2) => tw2.entry({ name: 'x', size: 3 }, Buffer.from('ab'))),
    /size 3 != 2/,
  );
  await assert.rejects(
    tarToBuffer(async (tw2) => tw2.entry({ name: 'd', type: 'directory' }, Buffer.from('ab'))),
    /cannot have content/,
  );
});
