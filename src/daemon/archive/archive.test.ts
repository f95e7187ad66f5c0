import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { readTar } from '../../images/tar-reader.ts';
import { tarToBuffer, TarWriter } from '../../util/tar-writer.ts';
import { opaqueDirs, overlayChanges } from './changes.ts';
import { extractArchive } from './extract.ts';
import { goFileMode, goTime } from './path-stat.ts';
import { archivePath } from './tar-out.ts';
import { resolvePath, type ContainerView } from './view.ts';

let dir: string;
let root: string;
let vol: string;
let view: ContainerView;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'engine-archive-'));
  root = join(dir, 'root');
  vol = join(dir, 'vol');
  for (const d of [root, vol, join(root, 'etc'), join(root, 'data'), join(root, 'proc/1')]) mkdirSync(d, { recursive: true });
  writeFileSync(join(root, 'etc/passwd'), 'root:x:0:0::/root:/bin/sh\n');
  writeFileSync(join(root, 'proc/1/status'), 'kernel stuff');
  writeFileSync(join(vol, 'in-volume'), 'v');
  symlinkSync('/etc', join(root, 'abs-etc'));
  symlinkSync('../../../../etc', join(root, 'dotdot-etc'));
  symlinkSync('/', join(root, 'slash'));
  view = {
    root,
    overlays: [{ destination: '/data', source: vol, readOnly: false, volume: true }],
    mounts: [
      { destination: '/data', source: vol, readOnly: false, volume: true },
      { destination: '/ro', source: '', readOnly: true, volume: true },
    ],
    readonlyRootfs: false,
  };
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

async function entries(buf: Buffer): Promise<string[]> {
  const out: string[] = [];
  for await (const e of readTar([buf])) out.push(`${e.header.kind}:${e.header.name}${e.header.linkname ? `->${e.header.linkname}` : ''}`);
  return out;
}

describe('container view paths', () => {
  test('symlinks resolve inside the container, ".." stops at its root, mounts map by path', async () => {
    assert.equal(await resolvePath(view, '/abs-etc/passwd', false), '/etc/passwd');
    assert.equal(await resolvePath(view, '/dotdot-etc/passwd', false), '/etc/passwd');
    assert.equal(await resolvePath(view, '/slash/slash/../etc', true), '/etc');
    assert.equal(await resolvePath(view, '/abs-etc', false), '/abs-etc');
    assert.equal(await resolvePath(view, '/abs-etc', true), '/etc');
    assert.equal(await resolvePath(view, '/data/in-volume', false), '/data/in-volume');
    await assert.rejects(resolvePath(view, '/missing/x', false), /no such file/);
  });
});

describe('archive out', () => {
  test('a directory with a volume under it and symlinks kept as links; kernel filesystems stay empty', async () => {
    const buf = await tarToBuffer((tw) => archivePath(view, '/', '', tw));
    const names = await entries(buf);
    assert.ok(names.includes('file:data/in-volume'), names.join());
    assert.ok(names.includes('symlink:abs-etc->/etc'));
    assert.ok(names.includes('directory:proc/'));
    assert.ok(!names.some((n) => n.includes('proc/1')), 'nothing below /proc');
    const one = await entries(await tarToBuffer((tw) => archivePath(view, '/etc', 'etc', tw)));
    assert.deepEqual(one, ['directory:etc/', 'file:etc/passwd']);
    const dot = await entries(await tarToBuffer((tw) => archivePath(view, '/etc', '.', tw)));
    assert.deepEqual(dot, ['directory:./', 'file:./passwd']);
  });
});

describe('archive in', () => {
  const put = (buf: Buffer, dest = '/', opts = { noOverwriteDirNonDir: false }) =>
    extractArchive(
      view,
      dest,
      (async function* () {
        yield buf;
      })(),
      opts,
    );

  test('files, directories, links and owners land in place; a path inside a volume goes to the volume', async () => {
    const buf = await tarToBuffer(async (tw) => {
      await tw.directory('new', { mode: 0o750, uid: 12, gid: 34, mtime: 1_000_000 });
      await tw.file('new/f', 'hello', { mode: 0o640, uid: 12, gid: 34, mtime: 1_000_000 });
      await tw.symlink('new/abs', '/etc/passwd');
      await tw.hardlink('new/hard', 'new/f');
      await tw.file('data/into-volume', 'vv');
    });
    await put(buf);
    assert.equal(readFileSync(join(root, 'new/f'), 'utf8'), 'hello');
    const st = lstatSync(join(root, 'new/f'));
    assert.deepEqual([st.mode & 0o777, st.uid, st.gid, st.mtimeMs], [0o640, 12, 34, 1_000_000_000]);
    assert.equal(lstatSync(join(root, 'new')).mode & 0o777, 0o750);
    assert.equal(lstatSync(join(root, 'new')).mtimeMs, 1_000_000_000);
    assert.equal(readlinkSync(join(root, 'new/abs')), '/etc/passwd');
    assert.equal(lstatSync(join(root, 'new/hard')).ino, st.ino);
    assert.equal(readFileSync(join(vol, 'into-volume'), 'utf8'), 'vv');
    assert.equal(existsSync(join(root, 'data/into-volume')), false);
  });

  test('entries leaving the target are refused: "..", absolute names, links out, writes through symlinks', async () => {
    const cases: Array<[string, (tw: TarWriter) => Promise<void>, RegExp]> = [
      ['dotdot', (tw) => tw.file('../escape', 'x'), /escapes the archive root/],
      ['absolute', (tw) => tw.entry({ name: 'abs', pax: { path: '/escape' } }, Buffer.from('x')), /absolute path/],
      ['hardlink out', (tw) => tw.hardlink('h', '../../etc/passwd'), /points outside the archive/],
      ['symlink out', (tw) => tw.symlink('s', '../../../etc'), /points outside the archive/],
      [
        'beneath archive symlink',
        async (tw) => {
          await tw.symlink('l', '/etc');
          await tw.file('l/evil', 'x');
        },
        /beneath a symlink/,
      ],
      ['through container symlink', (tw) => tw.file('abs-etc/evil', 'x'), /written through the symlink \/abs-etc/],
    ];
    for (const [what, build, re] of cases) {
      await assert.rejects(put(await tarToBuffer(build)), (e: Error & { status?: number }) => re.test(e.message) && e.status === 400, what);
    }
    assert.equal(existsSync(join(root, 'etc/evil')), false);
    assert.equal(existsSync(join(dir, 'escape')), false);
  });

  test('read-only mounts and noOverwriteDirNonDir', async () => {
    mkdirSync(join(root, 'ro'));
    await assert.rejects(
      put(await tarToBuffer((tw) => tw.file('ro/x', 'x'))),
      (e: Error & { status?: number }) => e.status === 403 && /read-only/.test(e.message),
    );
    await assert.rejects(
      put(await tarToBuffer((tw) => tw.file('etc', 'x')), '/', { noOverwriteDirNonDir: true }),
      /cannot overwrite directory "\/etc" with non-directory "etc"/,
    );
    await assert.rejects(put(await tarToBuffer((tw) => tw.file('data', 'x'))), /a volume or bind mount is mounted there/);
    // Without the flag a file replaces a directory (as tar does).
    mkdirSync(join(root, 'gone/sub'), { recursive: true });
    await put(await tarToBuffer((tw) => tw.file('gone', 'now a file')));
    assert.equal(readFileSync(join(root, 'gone'), 'utf8'), 'now a file');
  });
});

describe('changes and stat encoding', () => {
  test('an overlay upper directory read as dockerd does', async () => {
    const lower = join(dir, 'lower');
    const upper = join(dir, 'upper');
    for (const d of ['etc', 'root', 'usr/share']) mkdirSync(join(lower, d), { recursive: true });
    writeFileSync(join(lower, 'etc/passwd'), 'a');
    writeFileSync(join(lower, 'etc/group'), 'g');
    utimesSync(join(lower, 'usr'), 1000, 1000);
    for (const d of ['etc', 'root', 'newdir/sub', 'usr/share']) mkdirSync(join(upper, d), { recursive: true });
    writeFileSync(join(upper, 'etc/passwd'), 'ab');
    execFileSync('mknod', [join(upper, 'etc/group'), 'c', '0', '0']);
    writeFileSync(join(upper, 'root/new'), 'n');
    writeFileSync(join(upper, 'usr/share/added'), 'n');
    utimesSync(join(upper, 'usr'), 1000, 1000); // copied up only because of its child: listed all the same, before it (dockerd's two-tree walk)
    const changes = await overlayChanges(upper, [lower]);
    const text = changes.map((c) => `${'CAD'[c.Kind]} ${c.Path}`);
    assert.deepEqual(text, [
      'C /etc',
      'D /etc/group',
      'C /etc/passwd',
      'A /newdir',
      'A /newdir/sub',
      'C /root',
      'A /root/new',
      'C /usr',
      'C /usr/share',
      'A /usr/share/added',
    ]);
  });

  test('an opaque upper directory: what the lowers had below it is deleted, what it holds is new or changed', async () => {
    const lower = join(dir, 'lower');
    const upper = join(dir, 'upper');
    mkdirSync(join(lower, 'data/keep/sub'), { recursive: true });
    writeFileSync(join(lower, 'data/keep/a'), 'a');
    writeFileSync(join(lower, 'data/keep/sub/x'), 'x');
    writeFileSync(join(lower, 'data/keep/b'), 'old b');
    utimesSync(join(lower, 'data'), 1000, 1000);
    mkdirSync(join(upper, 'data/keep'), { recursive: true });
    writeFileSync(join(upper, 'data/keep/b'), 'new b');
    utimesSync(join(upper, 'data'), 1000, 1000);
    execFileSync('setfattr', ['-n', 'trusted.overlay.opaque', '-v', 'y', join(upper, 'data/keep')]);
    const opaque = await opaqueDirs(upper);
    assert.deepEqual(opaque, new Set(['/data/keep']));
    const text = (await overlayChanges(upper, [lower], opaque!)).map((c) => `${'CAD'[c.Kind]} ${c.Path}`);
    // b is in both trees: a modification, as dockerd's comparison of the two trees has it.
    assert.deepEqual(text, ['C /data', 'C /data/keep', 'D /data/keep/a', 'D /data/keep/sub', 'C /data/keep/b']);
  });

  test('Go FileMode bits and RFC 3339 times', () => {
    assert.equal(goFileMode(0o100644), 0o644);
    assert.equal(goFileMode(0o040755), 2 ** 31 + 0o755);
    assert.equal(goFileMode(0o120777), 2 ** 27 + 0o777);
    assert.equal(goFileMode(0o104755), 2 ** 23 + 0o755);
    assert.equal(goFileMode(0o041777), 2 ** 31 + 2 ** 20 + 0o777);
    assert.equal(goFileMode(0o020666), 2 ** 26 + 2 ** 21 + 0o666);
    assert.equal(goTime(1_700_000_000_123_400_000n), '2023-11-14T22:13:20.1234Z');
    assert.equal(goTime(1_700_000_000_000_000_000n), '2023-11-14T22:13:20Z');
  });
});
