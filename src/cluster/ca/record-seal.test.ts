// Records sealed at rest: the codec alone (forms, associated data, the refusal without a key or
// before the mode is known), then a real etcd: while sealing, every write path (create, update,
// batch, put, leased put) leaves no plain text in etcd's files and a client without the data key
// cannot read; a watch that meets a value it cannot open ends through its error callback; reseal
// rewrites values into the other form, leaving leased keys and the cluster record alone.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import { statusOf } from '../../errors.ts';
import type { EtcdMember } from '../store/etcd-process.ts';
import { RecordSeal } from './record-seal.ts';
import { newDataKey } from './secret-crypto.ts';
import type { ClusterStore } from '../store/store.ts';

function filesHold(dir: string, needle: string): boolean {
  for (const e of readdirSync(dir)) {
    const p = join(dir, e);
    if (statSync(p).isDirectory() ? filesHold(p, needle) : readFileSync(p).includes(needle)) return true;
  }
  return false;
}

test('the codec: clear or sealed by mode, either read back, bound to its key', () => {
  const key = newDataKey();
  const s = new RecordSeal();
  const clear = Buffer.from(s.encode('services/a', { Name: 'web' }));
  assert.equal(clear.toString(), '{"Name":"web"}');
  assert.equal(s.set(true, key), true);
  assert.equal(s.set(true, null), false, 'the same mode is no change; the key stays');
  const sealed = Buffer.from(s.encode('services/a', { Name: 'web' }));
  assert.ok(!sealed.includes('web'));
  assert.deepEqual(s.decode('services/a', sealed), { Name: 'web' });
  assert.deepEqual(s.decode('services/a', clear), { Name: 'web' }, 'a value of the old form still reads');
  assert.throws(() => s.decode('services/b', sealed), 'a value moved under another key does not open');
  assert.equal(s.encode('cluster', { a: 1 }), '{"a":1}', 'the cluster record stays clear');
  assert.equal(sealed.length, clear.length + 29, '# + nonce + tag');
  const tampered = Buffer.from(sealed);
  tampered[20] = tampered[20]! ^ 0x01; // flipped, not overwritten: an overwrite matches the byte one time in 256
  assert.throws(() => s.decode('services/a', tampered), 'tampered');
  assert.equal(s.inMode('services/a', sealed), true);
  assert.equal(s.inMode('services/a', clear), false);
  const other = new RecordSeal();
  other.set(true, null);
  assert.throws(
    () => other.decode('services/a', sealed),
    (e: unknown) => statusOf(e) === 503 && /does not hold/.test(String(e)),
  );
  assert.throws(
    () => other.encode('services/a', {}),
    (e: unknown) => statusOf(e) === 503,
    'no clear write while sealing without the key',
  );
  const held = new RecordSeal();
  held.hold();
  assert.throws(() => held.encode('nodes/n', {}), /not ready/);
  assert.equal(held.encode('cluster', {}), '{}');
});

describe('sealed records on a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  let store: ClusterStore;
  let keyless: ClusterStore;
  const key = newDataKey();
  before(async () => {
    const etcd = await startTestEtcd();
    dir = etcd.dir;
    member = etcd.member;
    store = await etcd.openStore();
    keyless = await etcd.openStore();
  });
  after(async () => {
    store?.close();
    keyless?.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('every write path seals; reads need the key; reseal moves values between forms', async () => {
    await store.create('things/clear', { v: 'plain-before-autolock' });
    assert.ok(filesHold(dir, 'plain-before-autolock'));
    store.seal.set(true, key);
    keyless.seal.set(true, null);
    const v = await store.create('things/a', { v: 'secret-create-1' });
    await store.update('things/a', { v: 'secret-update-2' }, v);
    await store.batch([{ key: 'things/b', value: { v: 'secret-batch-3' } }]);
    await store.put('things/c', { v: 'secret-put-4' });
    await store.leases.putLeased('heartbeats/n1', { v: 'secret-lease-5' }, 30);
    await store.create('cluster', { v: 'cluster-record-6' });
    for (const s of ['secret-create-1', 'secret-update-2', 'secret-batch-3', 'secret-put-4', 'secret-lease-5'])
      assert.ok(!filesHold(dir, s), `${s} is not in etcd's files`);
    assert.ok(filesHold(dir, 'cluster-record-6'), 'the cluster record is written as is');
    assert.deepEqual((await store.get('things/a'))?.value, { v: 'secret-update-2' });
    assert.equal((await store.list('things/')).length, 4);
    await assert.rejects(keyless.get('things/a'), (e: unknown) => statusOf(e) === 503);
    assert.deepEqual((await keyless.get('things/clear'))?.value, { v: 'plain-before-autolock' });

    // A watch meeting a value it cannot open ends through onError (the cache then reads again).
    const snap = await keyless.snapshot('nothing/');
    const lost = new Promise<Error>((resolve) => void keyless.watchFrom('things/', snap.revision + 1, () => undefined, resolve));
    await store.put('things/d', { v: 'x' });
    assert.match((await lost).message, /does not hold/);

    // Sealed: the clear value is rewritten sealed (heartbeats and the cluster record left alone).
    assert.equal(await store.reseal((k) => k.startsWith('heartbeats/')), 1);
    await assert.rejects(keyless.get('things/clear'), (e: unknown) => statusOf(e) === 503);
    // Off: everything back in the clear, readable without the key.
    store.seal.set(false, null);
    keyless.seal.set(false, null);
    assert.equal(await store.reseal((k) => k.startsWith('heartbeats/')), 5);
    assert.deepEqual((await keyless.get('things/a'))?.value, { v: 'secret-update-2' });
    assert.equal((await keyless.list('things/')).length, 5);
    await assert.rejects(keyless.get('heartbeats/n1'), (e: unknown) => statusOf(e) === 503, 'the leased key was not rewritten');
    assert.equal(await store.reseal(() => false), 1, 'a second pass finds only what was skipped');
  });
});
