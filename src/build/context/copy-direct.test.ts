// COPY of a context directory with direct writes (copy.ts `direct`, copy-direct.ts): names the
// destination lacks are left for the upper directory and written there after the "unmount" (here
// plain directories stand in for the mount and the upper directory); files whose copy keeps the
// source's owner and mode are hard links to the context's file, the others copies with COPY's
// metadata; names the destination has go through the mount at once.
import assert from 'node:assert/strict';
import { linkSync, lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, rmSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { after, test } from 'node:test';
import { copySources } from './copy.ts';
import type { CopySource } from './copy-sources.ts';

const base = mkdtempSync(`${tmpdir()}/copy-direct-test-`);
after(() => rmSync(base, { recursive: true, force: true }));
let n = 0;
const fresh = () => {
  const d = `${base}/${n++}`;
  mkdirSync(d);
  return d;
};
const put = (path: string, data: string, mode = 0o644) => {
  mkdirSync(path.slice(0, path.lastIndexOf('/')), { recursive: true });
  writeFileSync(path, data, { mode });
};

function context(): string {
  const c = fresh();
  put(`${c}/a.txt`, 'A');
  put(`${c}/run.sh`, 'echo', 0o755);
  put(`${c}/dir/x.txt`, 'X');
  linkSync(`${c}/dir/x.txt`, `${c}/dir/x-again.txt`);
  symlinkSync('dir/x.txt', `${c}/link`);
  utimesSync(`${c}/a.txt`, 1_600_000_000, 1_600_000_000);
  utimesSync(`${c}/dir`, 1_500_000_000, 1_500_000_000);
  return c;
}
const dirSource = (c: string): CopySource[] => [{ path: c, rel: '.', isDir: true }];
const root = { uid: 0, gid: 0 };

test('a fresh destination: the whole tree goes to the upper directory, files as links to the context', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  const c = context();
  const mount = fresh();
  const upper = fresh();
  const r = await copySources(dirSource(c), mount, '/ctx', { owner: root, direct: true });
  assert.ok(r.afterUnmount, 'writes left for the upper directory');
  assert.deepEqual(readdir(`${mount}/ctx`), [], 'only the destination directory is made through the mount');
  mkdirSync(`${upper}/ctx`); // what the mount's mkdir left in the upper directory
  await r.afterUnmount!(upper);
  const src = lstatSync(`${c}/a.txt`);
  const dst = lstatSync(`${upper}/ctx/a.txt`);
  assert.equal(dst.ino, src.ino, 'a hard link, not a copy');
  assert.equal(dst.mtimeMs, 1_600_000_000_000);
  assert.equal(lstatSync(`${upper}/ctx/run.sh`).mode & 0o7777, 0o755);
  assert.equal(lstatSync(`${upper}/ctx/dir/x-again.txt`).ino, lstatSync(`${upper}/ctx/dir/x.txt`).ino, 'source hard links stay links');
  assert.equal(lstatSync(`${upper}/ctx/dir`).mtimeMs, 1_500_000_000_000, 'directory mtime set after its content');
  assert.equal(readlinkSync(`${upper}/ctx/link`), 'dir/x.txt');
  assert.deepEqual([r.files, r.dirs, r.symlinks], [3, 1, 1]);
});

test('--chown and --chmod: copies with the asked metadata, the context untouched', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  for (const opts of [{ owner: { uid: 1234, gid: 99 } }, { owner: root, mode: 0o600 }]) {
    const c = context();
    const mount = fresh();
    const upper = fresh();
    const r = await copySources(dirSource(c), mount, '/ctx', { ...opts, direct: true });
    mkdirSync(`${upper}/ctx`);
    await r.afterUnmount!(upper);
    const dst = lstatSync(`${upper}/ctx/a.txt`);
    assert.notEqual(dst.ino, lstatSync(`${c}/a.txt`).ino, 'a copy');
    assert.equal(readFileSync(`${upper}/ctx/a.txt`, 'utf8'), 'A');
    assert.equal(dst.uid, opts.owner.uid);
    assert.equal(dst.mode & 0o7777, opts.mode ?? 0o644);
    assert.equal(dst.mtimeMs, 1_600_000_000_000);
    assert.equal(lstatSync(`${c}/a.txt`).uid, 0, 'the context keeps its owner');
  }
});

test('an existing destination: names it has go through the mount, the others to the upper directory', { skip: process.getuid?.() !== 0 && 'needs root' }, async () => {
  const c = context();
  const mount = fresh();
  const upper = fresh();
  put(`${mount}/app/a.txt`, 'old'); // in the image
  const r = await copySources(dirSource(c), mount, '/app', { owner: root, direct: true });
  assert.equal(readFileSync(`${mount}/app/a.txt`, 'utf8'), 'A', 'replaced through the mount');
  assert.equal(lstatSync(`${mount}/app/run.sh`, { throwIfNoEntry: false }), undefined, 'fresh names wait for the upper directory');
  mkdirSync(`${upper}/app`);
  await r.afterUnmount!(upper);
  assert.deepEqual(readdir(`${upper}/app`), ['dir', 'link', 'run.sh']);
});

test('several sources: everything through the mount', async () => {
  const c = context();
  const mount = fresh();
  const r = await copySources(
    [
      { path: `${c}/a.txt`, rel: 'a.txt', isDir: false },
      { path: `${c}/dir`, rel: 'dir', isDir: true },
    ],
    mount,
    '/ctx/',
    { direct: true },
  );
  assert.equal(r.afterUnmount, undefined);
  assert.deepEqual(readdir(`${mount}/ctx`), ['a.txt', 'x-again.txt', 'x.txt']);
});

function readdir(p: string): string[] {
  return readdirSync(p).sort();
}
