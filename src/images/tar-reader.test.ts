import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { buildHeader, tarToBuffer } from '../util/tar-writer.ts';
import { readTar, resolveLinkTarget, safeEntryPath, TarParser, TarPathGuard, type TarHeader } from './tar-reader.ts';

async function* chunked(buf: Buffer, size: number): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}

async function entries(buf: Buffer, chunk = 7): Promise<Array<{ h: TarHeader; data: string }>> {
  const out: Array<{ h: TarHeader; data: string }> = [];
  for await (const e of readTar(chunked(buf, chunk))) {
    const parts: Buffer[] = [];
    for await (const c of e.body) parts.push(c);
    out.push({ h: e.header, data: Buffer.concat(parts).toString() });
  }
  return out;
}

/** A raw ustar header block (for names the writer would normalise away). */
function rawEntry(name: string, typeflag: string, linkname = '', data = ''): Buffer {
  const body = Buffer.from(data);
  const h = buildHeader({
    name,
    prefix: '',
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: body.length,
    mtime: 0,
    typeflag,
    linkname,
    uname: '',
    gname: '',
    devmajor: 0,
    devminor: 0,
  });
  const pad = Buffer.alloc((512 - (body.length % 512)) % 512);
  return Buffer.concat([h, body, pad]);
}

const end = Buffer.alloc(1024);

describe('tar reader', () => {
  test('reads entries, bodies, long (PAX) names and links in any chunking', async () => {
    const long = `${'d'.repeat(120)}/${'f'.repeat(120)}`;
    const tar = await tarToBuffer(async (tw) => {
      await tw.directory('etc', { mtime: 1000 });
      await tw.file('etc/hello', 'hello world\n', { mode: 0o600, uid: 7, gid: 8, mtime: 1000 });
      await tw.file(long, 'x'.repeat(1000));
      await tw.symlink('bin/sh', 'busybox');
      await tw.hardlink('etc/hello2', 'etc/hello');
      await tw.file('ünïcode', 'u');
    });
    for (const size of [1, 7, 512, 100_000]) {
      const got = await entries(tar, size);
      assert.deepEqual(
        got.map((e) => [e.h.name, e.h.kind]),
        [
          ['etc/', 'directory'],
          ['etc/hello', 'file'],
          [long, 'file'],
          ['bin/sh', 'symlink'],
          ['etc/hello2', 'link'],
          ['ünïcode', 'file'],
        ],
      );
      assert.equal(got[1]!.data, 'hello world\n');
      assert.equal(got[1]!.h.mode, 0o600);
      assert.equal(got[1]!.h.uid, 7);
      assert.equal(got[1]!.h.mtime, 1000);
      assert.equal(got[2]!.data, 'x'.repeat(1000));
      assert.equal(got[3]!.h.linkname, 'busybox');
      assert.equal(got[4]!.h.linkname, 'etc/hello');
    }
  });

  test('unread bodies are skipped', async () => {
    const tar = await tarToBuffer(async (tw) => {
      await tw.file('a', 'A'.repeat(3000));
      await tw.file('b', 'B');
    });
    const names: string[] = [];
    for await (const e of readTar(chunked(tar, 100))) names.push(e.header.name);
    assert.deepEqual(names, ['a', 'b']);
  });

  test('truncated archives and garbage are refused with a 400', async () => {
    const tar = await tarToBuffer(async (tw) => tw.file('a', 'A'.repeat(3000)));
    await assert.rejects(
      entries(tar.subarray(0, 1500)),
      (e: Error & { status?: number }) => e.status === 400 && /unexpected end/.test(e.message),
    );
    await assert.rejects(
      entries(Buffer.from('this is not a tar archive'.repeat(40))),
      (e: Error & { status?: number }) => e.status === 400 && /checksum/.test(e.message),
    );
  });

  test('a GNU long name entry applies to the next entry', async () => {
    const name = 'n'.repeat(300);
    const longName = rawEntry('././@LongLink', 'L', '', name + '\0');
    const tar = Buffer.concat([longName, rawEntry('short', '0', '', 'data'), end]);
    const got = await entries(tar);
    assert.equal(got.length, 1);
    assert.equal(got[0]!.h.name, name);
    assert.equal(got[0]!.data, 'data');
  });

  test('the push parser reports the same entries', () => {
    const seen: string[] = [];
    const p = new TarParser({ entry: (h) => seen.push(h.name), data: () => undefined, entryEnd: () => undefined });
    const tar = Buffer.concat([rawEntry('x', '0', '', 'abc'), rawEntry('y/', '5'), end]);
    for (let i = 0; i < tar.length; i += 3) p.push(tar.subarray(i, i + 3));
    p.end();
    assert.deepEqual(seen, ['x', 'y/']);
  });
});

describe('tar path rules', () => {
  test('names with .. or an absolute path are refused', () => {
    assert.equal(safeEntryPath('./etc//passwd'), 'etc/passwd');
    assert.equal(safeEntryPath('./'), '');
    assert.throws(() => safeEntryPath('../evil'), /escapes the archive root/);
    assert.throws(() => safeEntryPath('a/../../evil'), /escapes/);
    assert.throws(() => safeEntryPath('/etc/passwd'), /absolute/);
  });

  test('link targets are resolved relative to the entry', () => {
    assert.equal(resolveLinkTarget('a/b/link', '../c'), 'a/c');
    assert.equal(resolveLinkTarget('a/link', '..'), '');
    assert.equal(resolveLinkTarget('a/link', '../../x'), null);
  });

  const h = (name: string, kind: TarHeader['kind'], linkname = ''): TarHeader => ({
    name,
    kind,
    typeflag: '',
    mode: 0,
    uid: 0,
    gid: 0,
    size: 0,
    mtime: 0,
    linkname,
    uname: '',
    gname: '',
    devmajor: 0,
    devminor: 0,
    pax: {},
  });

  test('layer archives may hold absolute symlinks but nothing that leads out', () => {
    const g = new TarPathGuard({ absoluteSymlinks: true });
    g.check(h('bin/sh', 'symlink', '/bin/busybox'));
    g.check(h('lib', 'symlink', 'usr/lib'));
    assert.throws(() => g.check(h('escape', 'symlink', '../../etc')), /points outside/);
    assert.throws(() => g.check(h('hard', 'link', '../etc/passwd')), /outside/);
    assert.throws(() => g.check(h('hard', 'link', '/etc/passwd')), /outside/);
    assert.throws(() => g.check(h('lib/libc.so', 'file')), /beneath a symlink/);
  });

  test('daemon archives (docker save) refuse absolute symlinks', () => {
    const g = new TarPathGuard({ absoluteSymlinks: false });
    g.check(h('abc/layer.tar', 'symlink', '../blobs/sha256/00'));
    assert.throws(() => g.check(h('manifest.json', 'symlink', '/etc/passwd')), /absolute/);
  });
});

test('stopAtEnd: nothing after the end-of-archive marker is read (an empty tar padded with gigabytes)', async () => {
  let reads = 0;
  const endMarker = Buffer.alloc(1024);
  async function* padded(): AsyncGenerator<Buffer> {
    yield endMarker;
    // Endless padding: a reader that went on would never finish.
    for (;;) {
      reads++;
      yield Buffer.alloc(64 * 1024);
    }
  }
  const seen = [];
  for await (const e of readTar(padded(), { stopAtEnd: true })) seen.push(e.header.name);
  assert.deepEqual(seen, []);
  assert.ok(reads <= 1, `read ${reads} chunks of padding`);
});
