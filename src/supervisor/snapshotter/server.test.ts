// The snapshots API as containerd's proxy calls it, through our own gRPC client: answers decode to
// containerd's shapes, failures arrive as the gRPC codes containerd's errdefs reads.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { SupervisorClient } from '../client.ts';
import { GrpcStatus, grpcCode } from '../errors.ts';
import { FuseOverlaySnapshotter } from './fuse-overlayfs.ts';
import { serveSnapshotter, type SnapshotServer } from './server.ts';

let tmp: TempDir;
let s: FuseOverlaySnapshotter;
let server: SnapshotServer;
let client: SupervisorClient;
before(async () => {
  tmp = tempDir('fuse-srv-');
  s = await FuseOverlaySnapshotter.open(join(tmp.dir, 'root'));
  server = await serveSnapshotter(s, join(tmp.dir, 'run', 's.sock'), 'fuse-overlayfs');
  client = new SupervisorClient(server.address, { namespace: 'unused', snapshotter: 'fuse-overlayfs' });
});
after(async () => {
  client?.close();
  await server?.close();
  s?.close();
  tmp?.remove();
});

async function code(p: Promise<unknown>): Promise<number | undefined> {
  try {
    await p;
  } catch (err) {
    return grpcCode(err);
  }
  return GrpcStatus.OK;
}

test('prepare, commit, stat, mounts, usage, update, list and remove over gRPC', async () => {
  const m = await client.snapshots.prepare({ key: 'k1', parent: '', labels: { 'containerd.io/snapshot/a': 'b' } });
  assert.equal(m.length, 1);
  assert.equal(m[0]!.type, 'bind');
  writeFileSync(join(m[0]!.source, 'f'), Buffer.alloc(8192, 1));
  const active = await client.snapshots.stat('k1');
  assert.equal(active.kind, 'ACTIVE');
  assert.deepEqual(active.labels, { 'containerd.io/snapshot/a': 'b' });
  assert.ok(Number(active.created_at!.seconds) > 1_700_000_000);
  const u = await client.snapshots.usage('k1');
  assert.equal(u.inodes, '2');
  assert.ok(Number(u.size) >= 8192);

  await client.snapshots.commit({ name: 'base', key: 'k1' });
  assert.equal((await client.snapshots.stat('base')).kind, 'COMMITTED');
  const m2 = await client.snapshots.prepare({ key: 'k2', parent: 'base' });
  assert.equal(m2[0]!.type, 'fuse3.fuse-overlayfs');
  assert.equal(m2[0]!.source, 'overlay');
  assert.deepEqual(await client.snapshots.mounts('k2'), m2);
  const v = await client.snapshots.view({ key: 'v', parent: 'base' });
  assert.deepEqual(v[0]!.options, ['ro', 'rbind']);
  assert.equal((await client.snapshots.stat('v')).kind, 'VIEW');

  const updated = await client.snapshots.update({ name: 'base', labels: { 'containerd.io/gc.root': 'x' } }, [
    'labels.containerd.io/gc.root',
  ]);
  assert.deepEqual(updated.labels, { 'containerd.io/gc.root': 'x' });

  const all = await client.snapshots.list();
  assert.deepEqual(all.map((i) => [i.name, i.kind, i.parent]).sort(), [
    ['base', 'COMMITTED', ''],
    ['k2', 'ACTIVE', 'base'],
    ['v', 'VIEW', 'base'],
  ]);
  assert.deepEqual(
    (await client.snapshots.list(['kind==view'])).map((i) => i.name),
    ['v'],
  );

  await client.snapshots.remove('v');
  await client.snapshots.remove('k2');
  await client.snapshots.remove('base');
  assert.deepEqual(await client.snapshots.list(), []);
});

test('failures arrive as containerd’s gRPC codes with its messages', async () => {
  assert.equal(await code(client.snapshots.stat('nothing')), GrpcStatus.NOT_FOUND);
  assert.equal(await code(client.snapshots.prepare({ key: 'x', parent: 'nothing' })), GrpcStatus.NOT_FOUND);
  await client.snapshots.prepare({ key: 'dup', parent: '' });
  assert.equal(await code(client.snapshots.prepare({ key: 'dup', parent: '' })), GrpcStatus.ALREADY_EXISTS);
  assert.equal(await code(client.snapshots.prepare({ key: 'y', parent: 'dup' })), GrpcStatus.INVALID_ARGUMENT);
  await client.snapshots.commit({ name: 'parent', key: 'dup' });
  await client.snapshots.prepare({ key: 'child', parent: 'parent' });
  assert.equal(await code(client.snapshots.remove('parent')), GrpcStatus.FAILED_PRECONDITION);
  assert.equal(await code(client.snapshots.list(['name~=x'])), GrpcStatus.INVALID_ARGUMENT);
  await assert.rejects(client.snapshots.remove('parent'), /cannot remove snapshot with child/);
  // Another snapshotter's name is not ours to answer for.
  assert.equal(await code(client.snapshots.stat('parent', { snapshotter: 'overlayfs' })), GrpcStatus.NOT_FOUND);
  await client.snapshots.remove('child');
  await client.snapshots.remove('parent');
});

test('a list longer than one answer arrives whole', async () => {
  for (let i = 0; i < 250; i++) await client.snapshots.prepare({ key: `many-${String(i).padStart(3, '0')}`, parent: '' });
  const all = await client.snapshots.list(['name!=none']);
  assert.equal(all.length, 250);
  assert.equal(new Set(all.map((i) => i.name)).size, 250);
  for (const i of all) await client.snapshots.remove(i.name);
});
