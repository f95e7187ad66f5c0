// Tests of build-context extraction: metadata kept, compression sniffed, hostile archives refused,
// .dockerignore applied while streaming.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { buildHeader, tarToBuffer, type TarEntry } from '../../util/tar-writer.ts';
import { extractContext } from './tar-extract.ts';

const base = mkdtempSync(`${tmpdir()}/ctx-extract-`);
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = `${base}/${n++}`;
  mkdirSync(d);
  return d;
};

type Spec = [TarEntry, string?];
const tar = (entries: Spec[]) => tarToBuffer(async (tw) => {
  for (const [e, data] of entries) await tw.entry({ mtime: 1_600_000_000, ...e, ...(data !== undefined ? { size: Buffer.byteLength(data) } : {}) }, data !== undefined ? Buffer.from(data) : undefined);
});
async function* chunks(buf: Buffer, size = 1000): AsyncGenerator<Buffer> {
  for (let i = 0; i < buf.length; i += size) yield buf.subarray(i, i + size);
}
/** A raw header (the writer would normalise hostile names away). */
function raw(name: string, typeflag: string, linkname = '', data = ''): Buffer {
  const body = Buffer.from(data);
  const h = buildHeader({ name, prefix: '', mode: 0o644, uid: 0, gid: 0, size: body.length, mtime: 0, typeflag, linkname, uname: '', gname: '', devmajor: 0, devminor: 0 });
  return Buffer.concat([h, body, Buffer.alloc((512 - (body.length % 512)) % 512)]);
}
const end = Buffer.alloc(1024);
const is400 = (re: RegExp) => (err: Error & { status?: number }) => err.status === 400 && re.test(err.message);

describe('build context extraction', () => {
  test('files, directories, links, modes, owners and mtimes are kept', async () => {
    const buf = await tar([
      [{ name: 'Dockerfile' }, 'FROM busybox\n'],
      [{ name: 'dir', type: 'directory', mode: 0o750, mtime: 1_500_000_000 }],
      [{ name: 'dir/run.sh', mode: 0o4755, uid: 1000, gid: 1001 }, '#!/bin/sh\n'],
      [{ name: 'dir/link', type: 'symlink', linkname: 'run.sh' }],
      [{ name: 'abs', type: 'symlink', linkname: '/etc/passwd' }],
      [{ name: 'hard', type: 'link', linkname: 'dir/run.sh' }],
      [{ name: 'deep/er/file.txt' }, 'x'],
      [{ name: 'fifo', type: 'fifo' }],
    ]);
    const d = fresh();
    const r = await extractContext(chunks(buf), d);
    assert.deepEqual({ entries: r.entries, skipped: r.skipped, bytes: r.bytes }, { entries: 7, skipped: 1, bytes: 24 });
    assert.equal(readFileSync(`${d}/Dockerfile`, 'utf8'), 'FROM busybox\n');
    const sh = statSync(`${d}/dir/run.sh`);
    assert.equal(sh.mode & 0o7777, 0o4755);
    assert.equal(sh.mtimeMs, 1_600_000_000_000);
    if (process.getuid?.() === 0) assert.deepEqual([sh.uid, sh.gid], [1000, 1001]);
    assert.equal(statSync(`${d}/dir`).mode & 0o777, 0o750);
    assert.equal(statSync(`${d}/dir`).mtimeMs, 1_500_000_000_000);
    assert.equal(readlinkSync(`${d}/dir/link`), 'run.sh');
    assert.equal(readlinkSync(`${d}/abs`), '/etc/passwd');
    assert.equal(statSync(`${d}/hard`).ino, sh.ino);
    assert.equal(readFileSync(`${d}/deep/er/file.txt`, 'utf8'), 'x');
    assert.equal(existsSync(`${d}/fifo`), false);
  });

  test('gzip, bzip2 and xz contexts are detected by their magic bytes', async () => {
    const buf = await tar([[{ name: 'a.txt' }, 'hello']]);
    const variants: Array<[string, Buffer]> = [['gzip', gzipSync(buf)]];
    for (const tool of ['bzip2', 'xz']) {
      const out = spawnSync(tool, ['-c'], { input: buf });
      if (out.status === 0) variants.push([tool, out.stdout]);
      else assert.fail(`${tool} is not installed (scripts/setup.sh DEB_RUNTIME)`);
    }
    for (const [kind, data] of variants) {
      const d = fresh();
      await extractContext(chunks(data, 100), d);
      assert.equal(readFileSync(`${d}/a.txt`, 'utf8'), 'hello', kind);
    }
  });

  test('a large file is streamed, not buffered whole', async () => {
    const size = 6 << 20;
    const head = buildHeader({ name: 'big.bin', prefix: '', mode: 0o644, uid: 0, gid: 0, size, mtime: 0, typeflag: '0', linkname: '', uname: '', gname: '', devmajor: 0, devminor: 0 });
    let maxChunk = 0;
    async function* gen(): AsyncGenerator<Buffer> {
      yield head;
      const block = Buffer.alloc(64 << 10, 7);
      for (let i = 0; i < size; i += block.length) yield block;
      yield end;
    }
    const d = fresh();
    const r = await extractContext((async function* () { for await (const c of gen()) { maxChunk = Math.max(maxChunk, c.length); yield c; } })(), d);
    assert.equal(r.bytes, size);
    assert.equal(statSync(`${d}/big.bin`).size, size);
    assert.ok(maxChunk <= 64 << 10);
  });

  test('names are cleaned as inside a chroot (dockerd): .. and absolute names land in the context; writes through symlinks are refused', async () => {
    const outside = fresh();
    writeFileSync(`${outside}/secret`, 'keep');
    const parent = fresh();
    const inner = `${parent}/ctx`;
    mkdirSync(inner);
    const res = await extractContext(
      chunks(Buffer.concat([
        raw('../evil', '0', '', 'x'), raw('a/../../../b/c', '0', '', 'y'), raw('/etc/abs', '0', '', 'z'),
        raw('up', '2', '../../etc'), raw('h', '1', '../../evil'), end,
      ])),
      inner,
    );
    assert.equal(res.entries, 5);
    assert.deepEqual(readdirSync(parent), ['ctx'], 'nothing written beside the context');
    assert.equal(readFileSync(`${inner}/evil`, 'utf8'), 'x');
    assert.equal(readFileSync(`${inner}/b/c`, 'utf8'), 'y');
    assert.equal(readFileSync(`${inner}/etc/abs`, 'utf8'), 'z');
    assert.equal(readlinkSync(`${inner}/up`), '../../etc', 'a symlink is stored as it is');
    assert.equal(statSync(`${inner}/h`).ino, statSync(`${inner}/evil`).ino, 'the hard link target cleaned likewise');
    const cases: Array<[string, Buffer, RegExp]> = [
      ['through symlink', Buffer.concat([raw('l', '2', outside), raw('l/secret', '0', '', 'pwned'), end]), /beneath a symlink/],
      ['through symlink, rooted', Buffer.concat([raw('l', '2', '../..'), raw('../l/x', '0', '', 'pwned'), end]), /beneath a symlink/],
      ['hard link via symlink', Buffer.concat([raw('s', '2', outside), raw('h', '1', 's/secret'), end]), /outside the context/],
    ];
    for (const [name, buf, re] of cases) {
      const d = fresh();
      await assert.rejects(extractContext(chunks(buf), d), is400(re), name);
    }
    assert.equal(readFileSync(`${outside}/secret`, 'utf8'), 'keep');
    // A file replacing a symlink of the same name replaces the link, it is not written through it.
    const d = fresh();
    await extractContext(chunks(Buffer.concat([raw('s', '2', `${outside}/secret`), raw('s', '0', '', 'new'), end])), d);
    assert.equal(readFileSync(`${outside}/secret`, 'utf8'), 'keep');
    assert.equal(lstatSync(`${d}/s`).isFile(), true);
  });

  test('a path given twice: the later entry replaces the earlier one, directories merge', async () => {
    const buf = Buffer.concat([
      raw('p', '0', '', 'file first'),
      raw('p/', '5'),
      raw('p/in', '0', '', 'inside'),
      raw('p/', '5'),
      raw('q', '2', 'p'),
      raw('q/', '5'),
      raw('r', '0', '', 'one'),
      raw('r', '0', '', 'two'),
      raw('h', '1', 'h'),
      end,
    ]);
    const d = fresh();
    await assert.rejects(extractContext(chunks(buf), d), is400(/hard link "h" points to itself/));
    assert.equal(readFileSync(`${d}/p/in`, 'utf8'), 'inside');
    assert.equal(lstatSync(`${d}/q`).isDirectory(), true);
    assert.equal(readFileSync(`${d}/r`, 'utf8'), 'two');
  });

  test('a truncated archive and a non-empty directory are errors', async () => {
    const buf = await tar([[{ name: 'a' }, 'x'.repeat(2000)]]);
    await assert.rejects(extractContext(chunks(buf.subarray(0, 1024)), fresh()), is400(/unexpected end of archive/));
    const d = fresh();
    writeFileSync(`${d}/x`, '');
    await assert.rejects(extractContext(chunks(buf), d), is400(/not empty/));
  });

  test('.dockerignore first: ignored entries are never written; build files always are', async () => {
    const buf = await tar([
      [{ name: '.dockerignore' }, '*.log\nnode_modules\nDockerfile\n.dockerignore\ndocs\n!docs/keep.md\n'],
      [{ name: 'Dockerfile' }, 'FROM x'],
      [{ name: 'app.log' }, 'log'],
      [{ name: 'app.js' }, 'js'],
      [{ name: 'node_modules', type: 'directory' }],
      [{ name: 'node_modules/m.js' }, 'm'],
      [{ name: 'docs', type: 'directory' }],
      [{ name: 'docs/drop.md' }, 'd'],
      [{ name: 'docs/keep.md' }, 'k'],
    ]);
    const d = fresh();
    const r = await extractContext(chunks(buf), d);
    assert.equal(r.ignoreFile, '.dockerignore');
    assert.equal(r.skipped, 5);
    assert.deepEqual(['Dockerfile', '.dockerignore', 'app.js', 'docs/keep.md'].map((f) => existsSync(`${d}/${f}`)), [true, true, true, true]);
    assert.deepEqual(['app.log', 'node_modules', 'docs/drop.md'].map((f) => existsSync(`${d}/${f}`)), [false, false, false]);
  });

  test('an ignore file arriving late sweeps what it ignores; the Dockerfile\'s own ignore file wins', async () => {
    const late = await tar([
      [{ name: 'a.tmp' }, 'x'],
      [{ name: 'dir/b.tmp' }, 'x'],
      [{ name: 'dir/c.txt' }, 'x'],
      [{ name: '.dockerignore' }, '**/*.tmp\n'],
    ]);
    const d = fresh();
    const r = await extractContext(chunks(late), d);
    assert.deepEqual([existsSync(`${d}/a.tmp`), existsSync(`${d}/dir/b.tmp`), existsSync(`${d}/dir/c.txt`)], [false, false, true]);
    assert.equal(r.skipped, 2);

    const both = await tar([
      [{ name: '.dockerignore' }, 'keep.txt\n'],
      [{ name: 'drop.txt' }, 'x'],
      [{ name: 'keep.txt' }, 'x'],
      [{ name: 'build/Dockerfile.dev.dockerignore' }, 'drop.txt\n'],
      [{ name: 'build/Dockerfile.dev' }, 'FROM x'],
    ]);
    const d2 = fresh();
    const r2 = await extractContext(chunks(both), d2, { dockerfile: 'build/Dockerfile.dev' });
    assert.equal(r2.ignoreFile, 'build/Dockerfile.dev.dockerignore');
    assert.equal(existsSync(`${d2}/drop.txt`), false);
    // keep.txt was skipped under the root .dockerignore before the Dockerfile's own file arrived:
    // clients filter with the root file themselves, so they never send it in that case.
    assert.equal(existsSync(`${d2}/build/Dockerfile.dev`), true);
    assert.equal(r2.ignore.ignores('keep.txt'), false);
  });

  test('applyIgnore: false keeps everything', async () => {
    const buf = await tar([[{ name: '.dockerignore' }, '*\n'], [{ name: 'a' }, 'x']]);
    const d = fresh();
    await extractContext(chunks(buf), d, { applyIgnore: false });
    assert.equal(existsSync(`${d}/a`), true);
  });
});
