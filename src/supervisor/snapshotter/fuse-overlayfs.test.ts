import assert from 'node:assert/strict';
import { existsSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import { afterEach, beforeEach, test } from 'node:test';
import { join } from 'node:path';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { SnapshotError } from './errors.ts';
import { FUSE_MOUNT_TYPE, FuseOverlaySnapshotter } from './fuse-overlayfs.ts';

let tmp: TempDir;
let s: FuseOverlaySnapshotter;
beforeEach(async () => {
  tmp = tempDir('fuse-snap-');
  s = await FuseOverlaySnapshotter.open(tmp.dir);
});
afterEach(() => {
  s.close();
  tmp.remove();
});

async function rejectsWith(p: Promise<unknown>, kind: SnapshotError['kind'], message?: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.ok(err instanceof SnapshotError, `expected a SnapshotError, got ${String(err)}`);
    assert.equal(err.kind, kind);
    if (message) assert.match(err.message, message);
    return true;
  });
}

const optionOf = (options: string[], key: string) => options.find((o) => o.startsWith(`${key}=`))?.slice(key.length + 1);

test('a layer without parent is a bind mount of its own directory; committed, it parents a fuse-overlayfs mount', async () => {
  const m1 = await s.prepare('base-active', '');
  assert.equal(m1.length, 1);
  assert.equal(m1[0]!.type, 'bind');
  assert.deepEqual(m1[0]!.options, ['rw', 'rbind']);
  const base = m1[0]!.source;
  assert.ok(base.startsWith(join(tmp.dir, 'snapshots')) && base.endsWith('/fs'));
  writeFileSync(join(base, 'hello'), 'x'.repeat(10_000));
  assert.equal((await s.stat('base-active')).kind, 'active');
  // An active snapshot's usage is measured on demand.
  const live = await s.usage('base-active');
  assert.equal(live.inodes, 2); // fs/ and the file
  assert.ok(live.size >= 10_000, `size ${live.size}`);

  await s.commit('base', 'base-active', { 'containerd.io/snapshot/x': 'y' });
  await rejectsWith(s.stat('base-active'), 'not-found');
  const info = await s.stat('base');
  assert.equal(info.kind, 'committed');
  assert.deepEqual(info.labels, { 'containerd.io/snapshot/x': 'y' });
  assert.deepEqual(await s.usage('base'), live); // recorded at commit
  await rejectsWith(s.mounts('base'), 'failed-precondition', /not active or view/);

  const m2 = await s.prepare('c1', 'base');
  assert.equal(m2[0]!.type, FUSE_MOUNT_TYPE);
  assert.equal(m2[0]!.source, 'overlay');
  assert.equal(optionOf(m2[0]!.options, 'lowerdir'), base);
  const upper = optionOf(m2[0]!.options, 'upperdir')!;
  const work = optionOf(m2[0]!.options, 'workdir')!;
  assert.ok(existsSync(upper) && existsSync(work));
  assert.deepEqual(m2[0]!.options.slice(0, 2), [`workdir=${work}`, `upperdir=${upper}`]);
  assert.deepEqual(await s.mounts('c1'), m2);
  assert.equal((await s.stat('c1')).parent, 'base');
});

test('views: of one layer a read-only bind of it, of a longer chain a fuse-overlayfs mount with lower directories only, nearest first', async () => {
  const l1 = (await s.prepare('a1', ''))[0]!.source;
  await s.commit('L1', 'a1');
  const up = optionOf((await s.prepare('a2', 'L1'))[0]!.options, 'upperdir')!;
  await s.commit('L2', 'a2');
  const v1 = await s.view('v1', 'L1');
  assert.deepEqual(v1, [{ type: 'bind', source: l1, options: ['ro', 'rbind'] }]);
  const v2 = await s.view('v2', 'L2');
  assert.equal(v2[0]!.type, FUSE_MOUNT_TYPE);
  assert.deepEqual(v2[0]!.options, [`lowerdir=${up}:${l1}`]);
  assert.equal((await s.stat('v2')).kind, 'view');
  assert.deepEqual(await s.usage('v2'), { size: 0, inodes: 0 });
  // A view without parent is an empty read-only directory.
  const v0 = await s.view('v0', '');
  assert.deepEqual(v0[0]!.options, ['ro', 'rbind']);
  // A view cannot be committed.
  await rejectsWith(s.commit('x', 'v2'), 'failed-precondition', /is not active/);
});

test('containerd’s preconditions: parents, duplicate keys and names, children, unknown keys', async () => {
  await rejectsWith(s.prepare('k', 'nope'), 'not-found', /missing parent "nope"/);
  await s.prepare('act', '');
  await rejectsWith(s.prepare('k', 'act'), 'invalid-argument', /not committed/);
  await rejectsWith(s.prepare('act', ''), 'already-exists');
  await s.commit('done', 'act');
  await s.prepare('act2', '');
  await rejectsWith(s.commit('done', 'act2'), 'already-exists');
  await s.prepare('child', 'done');
  await rejectsWith(s.remove('done'), 'failed-precondition', /with child/);
  await rejectsWith(s.remove('ghost'), 'not-found');
  await rejectsWith(s.mounts('ghost'), 'not-found');
  await rejectsWith(s.usage('ghost'), 'not-found');
  await rejectsWith(s.commit('n', 'ghost'), 'not-found');
  // The failed creates left no directory behind: one per snapshot that exists.
  assert.equal(readdirSync(join(tmp.dir, 'snapshots')).length, 3);
  await s.remove('child');
  await s.remove('done');
  await s.remove('act2');
  assert.deepEqual(readdirSync(join(tmp.dir, 'snapshots')), []);
  assert.deepEqual(await s.list(), []);
});

test('labels: update replaces them or sets single ones; empty values are no label; list filters', async () => {
  await s.prepare('a', '', { 'l.one': '1' });
  await s.commit('A', 'a', { 'containerd.io/gc.root': 'x', keep: 'k' });
  await s.prepare('b', 'A');
  let info = await s.update({ name: 'A', labels: { keep: 'changed', extra: 'e' } }, ['labels.keep']);
  assert.deepEqual(info.labels, { 'containerd.io/gc.root': 'x', keep: 'changed' });
  info = await s.update({ name: 'A', labels: {} }, ['labels.keep']);
  assert.deepEqual(info.labels, { 'containerd.io/gc.root': 'x' });
  info = await s.update({ name: 'A', labels: { only: 'this' } }, []);
  assert.deepEqual((await s.stat('A')).labels, { only: 'this' });
  await rejectsWith(s.update({ name: 'A', labels: {} }, ['parent']), 'invalid-argument');
  await rejectsWith(s.update({ name: 'zz', labels: {} }, []), 'not-found');

  const names = async (...f: string[]) => (await s.list(f)).map((i) => i.name);
  assert.deepEqual(await names(), ['A', 'b']);
  assert.deepEqual(await names('kind==committed'), ['A']);
  assert.deepEqual(await names('parent==A'), ['b']);
  assert.deepEqual(await names('kind==active', 'name==A'), ['A', 'b']);
  assert.deepEqual(await names('kind==active,name==A'), []);
  assert.deepEqual(await names('labels.only'), ['A']);
  assert.deepEqual(await names('labels."only"==this'), ['A']);
  assert.deepEqual(await names('name!=A'), ['b']);
  // A quoted label key may hold dots; a quoted value commas.
  await s.update({ name: 'A', labels: { 'containerd.io/gc.root': 'a,b' } }, ['labels.containerd.io/gc.root']);
  assert.deepEqual(await names('labels."containerd.io/gc.root"=="a,b"'), ['A']);
  assert.deepEqual(await names('labels."containerd.io/gc.root"=="a"'), []);
  await rejectsWith(s.list(['labels."open']), 'invalid-argument', /unterminated/);
  await rejectsWith(s.list(['name~=A']), 'invalid-argument');
});

test('state survives a reopen; directories no snapshot owns are removed at open', async () => {
  const src = (await s.prepare('a', ''))[0]!.source;
  writeFileSync(join(src, 'f'), 'data');
  await s.commit('A', 'a');
  await s.prepare('b', 'A');
  s.close();
  mkdirSync(join(tmp.dir, 'snapshots', 'new-leftover', 'fs'), { recursive: true });
  mkdirSync(join(tmp.dir, 'snapshots', '999', 'fs'), { recursive: true });
  s = await FuseOverlaySnapshotter.open(tmp.dir);
  assert.deepEqual(
    (await s.list()).map((i) => [i.name, i.kind, i.parent]),
    [
      ['A', 'committed', ''],
      ['b', 'active', 'A'],
    ],
  );
  assert.deepEqual(readdirSync(join(tmp.dir, 'snapshots')).sort(), ['1', '2']);
  // Ids keep counting from where they were: the next snapshot gets a new directory.
  const m = await s.prepare('c', 'A');
  assert.equal(optionOf(m[0]!.options, 'upperdir'), join(tmp.dir, 'snapshots', '3', 'fs'));
});

test('a new layer’s root belongs to the owner of its parent’s root', async () => {
  const src = (await s.prepare('a', ''))[0]!.source;
  const { chownSync } = await import('node:fs');
  chownSync(src, 1234, 5678);
  await s.commit('A', 'a');
  const up = optionOf((await s.prepare('b', 'A'))[0]!.options, 'upperdir')!;
  const st = statSync(up);
  assert.deepEqual([st.uid, st.gid], [1234, 5678]);
});

test('usage counts hard-linked files once and walks deep trees', async () => {
  const src = (await s.prepare('a', ''))[0]!.source;
  writeFileSync(join(src, 'f'), Buffer.alloc(64 * 1024, 1));
  const { linkSync } = await import('node:fs');
  linkSync(join(src, 'f'), join(src, 'g'));
  let dir = src;
  for (let i = 0; i < 300; i++) {
    dir = join(dir, 'd');
    mkdirSync(dir);
  }
  const u = await s.usage('a');
  assert.equal(u.inodes, 1 + 1 + 300);
  assert.ok(u.size >= 64 * 1024 && u.size < 64 * 1024 + 301 * 64 * 1024, `size ${u.size}`);
});
