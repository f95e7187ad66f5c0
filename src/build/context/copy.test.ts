// Tests of COPY/ADD: source resolution (wildcards, errors, URLs), scoped symlinks, Go globs, and
// the write into a destination root (directory semantics, owners, modes, links, tar extraction).
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { tarToBuffer } from '../../util/tar-writer.ts';
import { checkDestForSources, copySources, normalizeDest, parseChmod, resolveChown } from './copy.ts';
import { filenameForDownload, resolveSources } from './copy-sources.ts';
import { containsWildcards, followSymlinkInScope, globMatch } from './scoped-path.ts';

const base = mkdtempSync(`${tmpdir()}/copy-test-`);
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = `${base}/${n++}`;
  mkdirSync(d);
  return d;
};
const put = (path: string, data = 'x') => {
  mkdirSync(path.slice(0, path.lastIndexOf('/')), { recursive: true });
  writeFileSync(path, data);
};
const is400 = (re: RegExp) => (err: Error & { status?: number }) => err.status === 400 && re.test(err.message);

/** A context: files at several depths, a directory, a symlink inside and one pointing out. */
function context(): string {
  const c = fresh();
  put(`${c}/a.txt`, 'A');
  put(`${c}/b.txt`, 'B');
  put(`${c}/c.md`, 'C');
  put(`${c}/dir/x.txt`, 'X');
  put(`${c}/dir/sub/y.txt`, 'Y');
  symlinkSync('dir/x.txt', `${c}/link`);
  symlinkSync('/etc', `${c}/etc-link`);
  return c;
}

describe('scoped paths and globs', () => {
  test('followSymlinkInScope keeps every link inside the root', () => {
    const r = fresh();
    mkdirSync(`${r}/real/deep`, { recursive: true });
    symlinkSync('/real', `${r}/abs`);
    symlinkSync('../../../../real', `${r}/up`);
    symlinkSync('loop2', `${r}/loop1`);
    symlinkSync('loop1', `${r}/loop2`);
    assert.equal(followSymlinkInScope(`${r}/abs/deep`, r), `${r}/real/deep`);
    assert.equal(followSymlinkInScope(`${r}/up/deep/missing`, r), `${r}/real/deep/missing`);
    assert.throws(() => followSymlinkInScope(`${r}/real/../../..`, r), /is not in/); // lexically out
    assert.throws(() => followSymlinkInScope(`${r}/loop1`, r), /too many links/);
    assert.throws(() => followSymlinkInScope('/etc/passwd', r), /is not in/);
  });

  test('Go filepath.Match semantics', () => {
    assert.equal(globMatch('*.txt', 'a.txt'), true);
    assert.equal(globMatch('*.txt', 'dir/a.txt'), false);
    assert.equal(globMatch('d*/?.txt', 'dir/x.txt'), true);
    assert.equal(globMatch('[a-b].txt', 'b.txt'), true);
    assert.equal(globMatch('[^a-b].txt', 'c.txt'), true);
    assert.equal(globMatch('[^a-b].txt', 'a.txt'), false);
    assert.equal(globMatch('[^x]', '/'), true); // Go's classes, unlike * and ?, do not stop at /
    assert.equal(globMatch('a\\*', 'a*'), true);
    assert.equal(globMatch('a\\*', 'ab'), false);
    assert.equal(globMatch('[a-', 'a'), false); // malformed: matches nothing
    assert.equal(containsWildcards('a\\*b'), false);
    assert.equal(containsWildcards('a[b]'), true);
  });
});

describe('COPY sources', () => {
  const opts = { cmd: 'COPY' as const, dest: '/d/', isContext: true };

  test('plain paths, leading / and ./, directories, symlinks followed in scope', async () => {
    const c = context();
    const s = await resolveSources(c, ['/a.txt', './dir', 'link', '.'], opts);
    assert.deepEqual(s.map((x) => [x.rel, x.isDir, x.path]), [['a.txt', false, `${c}/a.txt`], ['dir', true, `${c}/dir`], ['link', false, `${c}/dir/x.txt`], ['.', true, c]]);
    // /etc resolves to <context>/etc, which does not exist: not the host's /etc.
    await assert.rejects(resolveSources(c, ['etc-link/passwd'], opts), is400(/COPY failed: file not found in build context or excluded by .dockerignore: stat etc-link\/passwd: file does not exist/));
  });

  test('wildcards match at their depth, in lexical order; no match at all is an error', async () => {
    const c = context();
    assert.deepEqual((await resolveSources(c, ['*.txt', 'dir/*'], opts)).map((x) => x.rel), ['a.txt', 'b.txt', 'dir/sub', 'dir/x.txt']);
    await assert.rejects(resolveSources(c, ['*.nothing'], opts), is400(/^COPY failed: no source files were specified$/));
  });

  test('outside the context, missing files, URLs for COPY', async () => {
    const c = context();
    await assert.rejects(resolveSources(c, ['../x'], opts), is400(/COPY failed: forbidden path outside the build context: \.\.\/x \(\)/));
    await assert.rejects(resolveSources(c, ['nope'], { ...opts, isContext: false }), is400(/^COPY failed: stat nope: file does not exist$/));
    await assert.rejects(resolveSources(c, ['http://127.0.0.1:1/x'], opts), is400(/source can't be a URL for COPY/));
  });

  test('several sources need a directory destination', () => {
    assert.throws(() => checkDestForSources('COPY', 2, '/app'), is400(/When using COPY with more than one source file, the destination must be a directory and end with a \//));
    checkDestForSources('COPY', 2, '/app/');
    checkDestForSources('ADD', 1, '/app');
  });
});

describe('ADD of a URL', () => {
  let server: Server;
  let url = '';
  before(async () => {
    server = createServer((req, res) => {
      if (req.url === '/files/tool.tgz') res.writeHead(200, { 'Last-Modified': 'Wed, 21 Oct 2015 07:28:00 GMT', 'Content-Length': '7' }).end('payload');
      else if (req.url === '/download/') res.writeHead(200, { 'Content-Disposition': 'attachment; filename="named.bin"' }).end('named');
      else if (req.url === '/bare/') res.writeHead(200).end('bare');
      else res.writeHead(404).end('not here');
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    const addr = server.address();
    url = `http://127.0.0.1:${typeof addr === 'object' && addr ? addr.port : 0}`;
  });
  after(() => server.close());

  test('downloaded, named from the URL or Content-Disposition, dated by Last-Modified, never extracted', async () => {
    const tmp = fresh();
    const progress: Array<[string, number, number | undefined]> = [];
    const [a, b] = await resolveSources('/nonexistent', [`${url}/files/tool.tgz`, `${url}/download/`], {
      cmd: 'ADD', dest: '/opt/', isContext: true, tmpDir: tmp, onProgress: (u, r, t) => progress.push([u, r, t]),
    });
    assert.deepEqual(progress.at(0), [`${url}/files/tool.tgz`, 7, 7]);
    assert.equal(a!.rel, 'tool.tgz');
    assert.equal(a!.fromUrl, true);
    assert.equal(readFileSync(a!.path, 'utf8'), 'payload');
    assert.equal(statSync(a!.path).mtimeMs, Date.parse('2015-10-21T07:28:00Z'));
    assert.equal(statSync(a!.path).mode & 0o777, 0o600);
    assert.equal(b!.rel, 'named.bin');
    const root = fresh();
    await copySources([a!, b!], root, '/opt/', { owner: { uid: 0, gid: 0 }, decompress: true });
    assert.equal(readFileSync(`${root}/opt/tool.tgz`, 'utf8'), 'payload');
  });

  test('no file name and a directory destination; HTTP errors', async () => {
    const tmp = fresh();
    await assert.rejects(resolveSources('/x', [`${url}/bare/`], { cmd: 'ADD', dest: '/opt/', isContext: true, tmpDir: tmp }), is400(/cannot determine filename for source/));
    const [s] = await resolveSources('/x', [`${url}/bare/`], { cmd: 'ADD', dest: '/opt/file', isContext: true, tmpDir: tmp });
    assert.equal(s!.rel, '__unnamed__');
    await assert.rejects(resolveSources('/x', [`${url}/missing`], { cmd: 'ADD', dest: '/o', isContext: true, tmpDir: tmp }), is400(/ADD failed: failed to GET .* with status 404/));
    assert.equal(filenameForDownload(new URL('http://h/a/b.tar?x=1'), null), 'b.tar');
    assert.equal(filenameForDownload(new URL('http://h/'), 'inline; filename=c.txt'), 'c.txt');
  });
});

describe('COPY into a destination root', () => {
  test('a file to a path, into a directory, and a directory\'s contents', async () => {
    const c = context();
    const root = fresh();
    mkdirSync(`${root}/existing`);
    const srcs = await resolveSources(c, ['a.txt'], { cmd: 'COPY', dest: '/x', isContext: true });
    await copySources(srcs, root, '/new/name.txt');
    await copySources(srcs, root, '/existing');
    await copySources(srcs, root, '/slash/');
    assert.equal(readFileSync(`${root}/new/name.txt`, 'utf8'), 'A');
    assert.equal(readFileSync(`${root}/existing/a.txt`, 'utf8'), 'A');
    assert.equal(readFileSync(`${root}/slash/a.txt`, 'utf8'), 'A');
    assert.equal(statSync(`${root}/new`).mode & 0o777, 0o755);
    const dir = await resolveSources(c, ['dir'], { cmd: 'COPY', dest: '/app', isContext: true });
    const st = await copySources(dir, root, '/app');
    assert.equal(readFileSync(`${root}/app/x.txt`, 'utf8'), 'X'); // contents, not dir/ itself
    assert.equal(readFileSync(`${root}/app/sub/y.txt`, 'utf8'), 'Y');
    assert.deepEqual([st.files, st.dirs], [2, 1]);
  });

  test('owners: root by default, --chown ids, kept for --from; --chmod; mtimes kept', async () => {
    const c = context();
    const { chownSync, chmodSync } = await import('node:fs');
    chownSync(`${c}/a.txt`, 1234, 4321);
    chmodSync(`${c}/a.txt`, 0o640);
    utimesSync(`${c}/a.txt`, 1_000_000, 1_000_000);
    const srcs = await resolveSources(c, ['a.txt', 'dir'], { cmd: 'COPY', dest: '/d/', isContext: true });
    const asRoot = fresh();
    await copySources(srcs, asRoot, '/d/', { owner: { uid: 0, gid: 0 } });
    const f = statSync(`${asRoot}/d/a.txt`);
    assert.deepEqual([f.uid, f.gid, f.mode & 0o777, f.mtimeMs], [0, 0, 0o640, 1_000_000_000]);
    const kept = fresh();
    await copySources(srcs, kept, '/d/');
    assert.deepEqual([statSync(`${kept}/d/a.txt`).uid, statSync(`${kept}/d/a.txt`).gid], [1234, 4321]);
    const chowned = fresh();
    await copySources(srcs, chowned, '/d/', { owner: { uid: 7, gid: 8 }, mode: parseChmod('0751') });
    for (const p of ['d/a.txt', 'd/x.txt', 'd/sub', 'd/sub/y.txt']) {
      const s = statSync(`${chowned}/${p}`);
      assert.deepEqual([s.uid, s.gid, s.mode & 0o777], [7, 8, 0o751], p);
    }
    assert.deepEqual([statSync(`${chowned}/d`).uid, statSync(`${chowned}/d`).mode & 0o777], [7, 0o755]);
    assert.throws(() => parseChmod('u+x'), is400(/invalid chmod parameter/));
  });

  test('--chown names are looked up in the image\'s /etc/passwd and /etc/group', () => {
    const rootfs = fresh();
    put(`${rootfs}/etc/passwd`, 'root:x:0:0::/root:/bin/sh\napp:x:1000:1001::/home/app:/bin/sh\n');
    put(`${rootfs}/etc/group`, 'root:x:0:\nstaff:x:50:\napp:x:1002:\n');
    assert.deepEqual(resolveChown('app', rootfs), { uid: 1000, gid: 1002 });
    assert.deepEqual(resolveChown('app:staff', rootfs), { uid: 1000, gid: 50 });
    assert.deepEqual(resolveChown('10:20', rootfs), { uid: 10, gid: 20 });
    assert.deepEqual(resolveChown('33', rootfs), { uid: 33, gid: 33 });
    assert.throws(() => resolveChown('ghost', rootfs), is400(/can't find uid for user ghost: no such user: ghost/));
    assert.throws(() => resolveChown('app:nogroup', rootfs), is400(/no such group: nogroup/));
    assert.throws(() => resolveChown('a:b:c', rootfs), is400(/invalid chown string format: a:b:c/));
    assert.throws(() => resolveChown('app', fresh()), is400(/can't find uid for user app/));
  });

  test('the image\'s symlinks never lead a write out of the root', async () => {
    const outside = fresh();
    const c = context();
    const root = fresh();
    symlinkSync(outside, `${root}/escape`); // absolute: resolves to <root>/<outside path>
    symlinkSync('../../..', `${root}/up`);
    mkdirSync(`${root}/usr/lib`, { recursive: true });
    symlinkSync('usr/lib', `${root}/lib`);
    const a = await resolveSources(c, ['a.txt'], { cmd: 'COPY', dest: '/', isContext: true });
    await copySources(a, root, '/escape/a.txt');
    await copySources(a, root, '/up/b.txt');
    assert.equal(existsSync(`${outside}/a.txt`), false);
    assert.equal(readFileSync(`${root}${outside}/a.txt`, 'utf8'), 'A');
    assert.equal(readFileSync(`${root}/b.txt`, 'utf8'), 'A');
    // A directory of the source meeting a symlinked directory goes through the link.
    const c2 = fresh();
    put(`${c2}/lib/libx.so`, 'so');
    await copySources(await resolveSources(c2, ['.'], { cmd: 'COPY', dest: '/', isContext: true }), root, '/');
    assert.equal(lstatSync(`${root}/lib`).isSymbolicLink(), true);
    assert.equal(readFileSync(`${root}/usr/lib/libx.so`, 'utf8'), 'so');
  });

  test('symlinks are copied as links, hard links stay linked', async () => {
    const c = fresh();
    put(`${c}/d/f`, 'data');
    linkSync(`${c}/d/f`, `${c}/d/g`);
    symlinkSync('f', `${c}/d/s`);
    const root = fresh();
    await copySources(await resolveSources(c, ['d'], { cmd: 'COPY', dest: '/o', isContext: true }), root, '/o');
    assert.equal(statSync(`${root}/o/f`).ino, statSync(`${root}/o/g`).ino);
    assert.equal(readlinkSync(`${root}/o/s`), 'f');
  });

  test('ADD extracts local archives, keeping their owners; COPY does not', async () => {
    const tar = await tarToBuffer(async (tw) => {
      await tw.entry({ name: 'pkg', type: 'directory' });
      await tw.entry({ name: 'pkg/bin', size: 3, mode: 0o755, uid: 5, gid: 6, mtime: 1_234_567 }, Buffer.from('bin'));
      await tw.entry({ name: 'pkg/l', type: 'symlink', linkname: '/etc/passwd' });
    });
    const c = fresh();
    writeFileSync(`${c}/pkg.tar.gz`, gzipSync(tar));
    writeFileSync(`${c}/notatar.gz`, 'plain text');
    const root = fresh();
    const srcs = await resolveSources(c, ['pkg.tar.gz', 'notatar.gz'], { cmd: 'ADD', dest: '/opt/', isContext: true });
    await copySources(srcs, root, '/opt/', { owner: { uid: 0, gid: 0 }, decompress: true });
    const bin = statSync(`${root}/opt/pkg/bin`);
    assert.deepEqual([readFileSync(`${root}/opt/pkg/bin`, 'utf8'), bin.uid, bin.gid, bin.mode & 0o777, bin.mtimeMs], ['bin', 5, 6, 0o755, 1_234_567_000]);
    assert.equal(readlinkSync(`${root}/opt/pkg/l`), '/etc/passwd');
    assert.equal(readFileSync(`${root}/opt/notatar.gz`, 'utf8'), 'plain text');
    const root2 = fresh();
    await copySources(await resolveSources(c, ['pkg.tar.gz'], { cmd: 'COPY', dest: '/', isContext: true }), root2, '/');
    assert.equal(existsSync(`${root2}/pkg.tar.gz`), true);
  });

  test('normalizeDest: relative to WORKDIR, trailing slash kept', () => {
    assert.equal(normalizeDest('/app', 'src/'), '/app/src/');
    assert.equal(normalizeDest('', '.'), '/');
    assert.equal(normalizeDest('/w', '/abs'), '/abs');
    assert.equal(normalizeDest('/w', '../x'), '/x');
  });
});
