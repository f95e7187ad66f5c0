// ADD's extraction of a local tar into an image's tree, through the one tree extractor: directories
// on the way that are the image's symlinks followed inside the root, an existing file replaced, a
// hard link within the archive, modes and times kept, and names or links that lead out refused.
import assert from 'node:assert/strict';
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { tarToBuffer } from '../../util/tar-writer.ts';
import { buildHeader } from '../../util/tar-writer.ts';
import { isArchive, untarInto } from './untar-into.ts';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
const temp = () => {
  const d = mkdtempSync(`${tmpdir()}/untar-into-test-`);
  dirs.push(d);
  return d;
};

/** A raw entry the writer would not produce (a name leading out). */
function raw(name: string, data = 'x'): Buffer {
  const body = Buffer.from(data);
  const h = buildHeader({
    name,
    prefix: '',
    mode: 0o644,
    uid: 0,
    gid: 0,
    size: body.length,
    mtime: 0,
    typeflag: '0',
    linkname: '',
    uname: '',
    gname: '',
    devmajor: 0,
    devminor: 0,
  });
  return Buffer.concat([h, body, Buffer.alloc(512 - body.length), Buffer.alloc(1024)]);
}

describe('untarInto (ADD of a local archive)', () => {
  test("follows the image's symlinked directories inside the root, replaces files, keeps links, modes and times", async () => {
    const root = temp();
    mkdirSync(`${root}/usr/lib`, { recursive: true });
    symlinkSync('/usr/lib', `${root}/lib`); // an absolute link of the image: resolved inside the root
    mkdirSync(`${root}/opt`);
    writeFileSync(`${root}/opt/old`, 'old');
    const tar = await tarToBuffer(async (tw) => {
      await tw.directory('lib/pkg', { mode: 0o750, mtime: 1_000_000 });
      await tw.file('lib/pkg/a.txt', 'alpha', { mode: 0o640, mtime: 1_000_001 });
      await tw.hardlink('lib/pkg/b.txt', 'lib/pkg/a.txt');
      await tw.file('old', 'new', { mode: 0o600 });
      await tw.symlink('rel', 'lib/pkg/a.txt');
    });
    const file = `${temp()}/pkg.tar.gz`;
    writeFileSync(file, gzipSync(tar));
    assert.equal(await isArchive(file), true);
    const optTar = `${temp()}/opt.tar`;
    writeFileSync(optTar, tar);
    assert.deepEqual(await untarInto(file, root, root), { entries: 5 });
    assert.equal(readFileSync(`${root}/usr/lib/pkg/a.txt`, 'utf8'), 'alpha', 'written through the image symlink /lib → /usr/lib, inside the root');
    assert.equal(lstatSync(`${root}/lib`).isSymbolicLink(), true, 'the image symlink itself stays');
    assert.equal(statSync(`${root}/usr/lib/pkg/b.txt`).ino, statSync(`${root}/usr/lib/pkg/a.txt`).ino);
    assert.equal(statSync(`${root}/usr/lib/pkg/a.txt`).mode & 0o7777, 0o640);
    assert.equal(statSync(`${root}/usr/lib/pkg`).mode & 0o7777, 0o750);
    assert.equal(statSync(`${root}/usr/lib/pkg`).mtimeMs, 1_000_000_000, 'directory times set last');
    await untarInto(optTar, `${root}/opt`, root);
    assert.equal(readFileSync(`${root}/opt/old`, 'utf8'), 'new', 'an existing file is replaced');
  });

  test('a name that leads out of the archive is refused with a 400, nothing written outside', async () => {
    const root = temp();
    mkdirSync(`${root}/dest`);
    const file = `${temp()}/evil.tar`;
    writeFileSync(file, raw('../escape.txt'));
    await assert.rejects(untarInto(file, `${root}/dest`, root), (e: Error & { status?: number }) => e.status === 400 && /escapes the archive root/.test(e.message));
    assert.throws(() => lstatSync(`${root}/escape.txt`));
    assert.equal(await isArchive(`${root}/dest`).catch(() => false), false);
  });
});
