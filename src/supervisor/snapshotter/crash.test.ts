// kill -9 at the snapshotter's crash points (and at random moments of a busy loop): the next open
// finds either the old state or the new one, every recorded snapshot with its directory and no
// directory without a snapshot.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, test } from 'node:test';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { FuseOverlaySnapshotter } from './fuse-overlayfs.ts';

const MODULE = new URL('./fuse-overlayfs.js', import.meta.url).href;

// The child: sets up a committed base, then (armed) does the step whose crash point kills it; in
// `loop` mode it prepares, commits and removes until the parent kills it.
const CHILD = `
const { FuseOverlaySnapshotter } = await import(${JSON.stringify(MODULE)});
const [root, point] = process.argv.slice(1);
let armed = false;
const die = (name) => () => { if (armed && name === point) process.kill(process.pid, 'SIGKILL'); };
const s = await FuseOverlaySnapshotter.open(root, { crashPoints: { prepared: die('prepared'), placed: die('placed'), forgotten: die('forgotten') } });
if (point === 'loop') {
  process.stdout.write('ready\\n');
  for (let i = 0; ; i++) {
    await s.prepare('a' + i, i ? 'c' + (i - 1) : '');
    await s.commit('c' + i, 'a' + i);
    await s.view('v' + i, 'c' + i);
    if (i % 2) await s.remove('v' + i);
  }
}
await s.prepare('base-a', '');
await s.commit('base', 'base-a');
await s.prepare('gone', '');
armed = true;
if (point === 'forgotten') await s.remove('gone');
else await s.prepare('victim', 'base');
process.stdout.write('not killed\\n');
`;

function runChild(root: string, point: string, killAfterReadyMs?: number): Promise<{ signal: string | null; out: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--disable-warning=ExperimentalWarning', '--input-type=module', '-e', CHILD, root, point], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d;
      if (killAfterReadyMs !== undefined && out.includes('ready')) setTimeout(() => child.kill('SIGKILL'), killAfterReadyMs);
    });
    child.stderr.on('data', (d: Buffer) => (out += d));
    child.on('error', reject);
    child.on('exit', (_code, signal) => resolve({ signal, out }));
  });
}

let tmp: TempDir;
beforeEach(() => {
  tmp = tempDir('fuse-crash-');
});
afterEach(() => tmp.remove());

/** Every snapshot has its directory (and work/ when active); every directory is a snapshot's. */
async function assertConsistent(s: FuseOverlaySnapshotter, root: string): Promise<void> {
  const dirs = readdirSync(join(root, 'snapshots')).sort();
  const infos = await s.list();
  const ids: string[] = [];
  for (const i of infos) {
    if (i.kind === 'committed') {
      assert.equal((await s.usage(i.name)).inodes >= 1, true);
      continue;
    }
    const m = await s.mounts(i.name);
    const upper = m[0]!.type === 'bind' ? m[0]!.source : m[0]!.options.find((o) => o.startsWith('upperdir='))?.slice(9);
    if (upper && i.kind === 'active') {
      assert.ok(existsSync(upper), `${i.name}: ${upper} exists`);
      ids.push(upper.split('/').at(-2)!);
    }
  }
  for (const id of ids) assert.ok(dirs.includes(id), `directory ${id} is there`);
  assert.ok(
    dirs.every((d) => /^\d+$/.test(d)),
    `no temporary directory left: ${dirs.join(' ')}`,
  );
  // One directory per snapshot: nothing orphaned, nothing missing.
  assert.equal(dirs.length, infos.length, `${dirs.length} directories for ${infos.length} snapshots`);
}

for (const point of ['prepared', 'placed'] as const) {
  test(`kill -9 ${point === 'prepared' ? 'before the transaction' : 'after the rename, before the commit'}: the prepare never happened`, async () => {
    const r = await runChild(tmp.dir, point);
    assert.equal(r.signal, 'SIGKILL', r.out);
    const before = readdirSync(join(tmp.dir, 'snapshots')).sort();
    assert.equal(before.length, 3, `base, gone and the half-made one: ${before.join(' ')}`);
    const s = await FuseOverlaySnapshotter.open(tmp.dir);
    try {
      assert.deepEqual(
        (await s.list()).map((i) => i.name),
        ['base', 'gone'],
      );
      await assertConsistent(s, tmp.dir);
      // The key is free, and the new snapshot does not reuse the id a crash left half-used.
      const m = await s.prepare('victim', 'base');
      const id = m[0]!.options
        .find((o) => o.startsWith('upperdir='))!
        .split('/')
        .at(-2)!;
      assert.ok(!before.includes(id), `id ${id} is new (was: ${before.join(' ')})`);
      await assertConsistent(s, tmp.dir);
    } finally {
      s.close();
    }
  });
}

test('kill -9 after a removal is recorded, before its directory is gone: the next open removes the directory', async () => {
  const r = await runChild(tmp.dir, 'forgotten');
  assert.equal(r.signal, 'SIGKILL', r.out);
  assert.equal(readdirSync(join(tmp.dir, 'snapshots')).length, 2);
  const s = await FuseOverlaySnapshotter.open(tmp.dir);
  try {
    assert.deepEqual(
      (await s.list()).map((i) => i.name),
      ['base'],
    );
    await assertConsistent(s, tmp.dir);
  } finally {
    s.close();
  }
});

test('kill -9 at random moments of a prepare/commit/view/remove loop leaves a consistent store', async () => {
  for (const ms of [30, 120, 250]) {
    const root = join(tmp.dir, String(ms));
    const r = await runChild(root, 'loop', ms);
    assert.equal(r.signal, 'SIGKILL', r.out);
    const s = await FuseOverlaySnapshotter.open(root);
    try {
      assert.ok((await s.list()).length > 0, 'the loop got going before the kill');
      await assertConsistent(s, root);
    } finally {
      s.close();
    }
  }
});
