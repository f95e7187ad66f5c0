// The replicated store against a real one-member etcd started by EtcdMember over mutual TLS with
// certificates of a fresh cluster CA: compare-and-swap versions, create conflicts, watches, leased
// keys, members; and a crashed etcd is restarted by its watcher.
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import { after, before, describe, test } from 'node:test';
import { EtcdMember } from './etcd-process.ts';
import { ClusterStore, OUT_OF_SEQUENCE } from './store.ts';

describe('cluster store on a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  let store: ClusterStore;
  let etcd: Awaited<ReturnType<typeof startTestEtcd>>;
  before(async () => {
    etcd = await startTestEtcd();
    dir = etcd.dir;
    member = etcd.member;
    store = await etcd.openStore();
  });
  after(async () => {
    store?.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('versions are compare-and-swap: a stale version is refused, a current one wins', async () => {
    const v1 = await store.create('things/a', { n: 1 });
    await assert.rejects(
      store.create('things/a', { n: 9 }),
      (e: Error & { status?: number }) => e.status === 409 && /already exists/.test(e.message),
    );
    const got = await store.get<{ n: number }>('things/a');
    assert.deepEqual(got?.value, { n: 1 });
    assert.equal(got?.version, v1);
    const v2 = await store.update('things/a', { n: 2 }, v1);
    assert.ok(v2 > v1);
    await assert.rejects(
      store.update('things/a', { n: 3 }, v1),
      (e: Error & { status?: number }) => e.status === 409 && e.message === OUT_OF_SEQUENCE,
    );
    await assert.rejects(store.update('things/none', { n: 3 }, v1), (e: Error & { status?: number }) => e.status === 404);
    assert.deepEqual((await store.get('things/a'))?.value, { n: 2 });
    await store.create('things/b', { n: 5 });
    assert.deepEqual(
      (await store.list<{ n: number }>('things/')).map((s) => [s.key, s.value.n]),
      [
        ['things/a', 2],
        ['things/b', 5],
      ],
    );
    await assert.rejects(store.delete('things/b', v1), /out of sequence/);
    assert.equal(await store.delete('things/b'), true);
    assert.equal(await store.get('things/b'), null);
  });

  test('a watch sees puts and deletes under its prefix only', async () => {
    const seen: string[] = [];
    const stop = await store.watch('watched/', (key, deleted) => seen.push(`${deleted ? 'del' : 'put'} ${key}`));
    await store.put('watched/x', 1);
    await store.put('elsewhere/y', 1);
    await store.delete('watched/x');
    const deadline = Date.now() + 20_000;
    while (seen.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    await stop();
    assert.deepEqual(seen, ['put watched/x', 'del watched/x']);
  });

  test('a leased key lives while refreshed and goes when its lease runs out', async () => {
    await store.leases.putLeased('beat/n1', { at: 1 }, 2);
    const v1 = (await store.get('beat/n1'))!.version;
    await store.leases.putLeased('beat/n1', { at: 2 }, 2);
    // A refresh is a keep-alive: no write, so no new revision and no watch event.
    const again = await store.get('beat/n1');
    assert.deepEqual(again?.value, { at: 1 });
    assert.equal(again?.version, v1);
    const deadline = Date.now() + 30_000;
    while ((await store.get('beat/n1')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    assert.equal(await store.get('beat/n1'), null);
    await store.leases.putLeased('beat/n1', { at: 3 }, 5); // the expired lease is replaced by a new one
    assert.deepEqual((await store.get('beat/n1'))?.value, { at: 3 });
  });

  test('a leased key another client took over is bound again by the next refresh (a node moving between managers)', async (t) => {
    const other = await etcd.openStore();
    t.after(() => other.close());
    await store.leases.putLeased('beat/n2', { by: 'a' }, 2);
    await other.leases.putLeased('beat/n2', { by: 'b' }, 2); // bound to b's lease now; b refreshes no more
    const vb = (await store.get('beat/n2'))!.version;
    await store.leases.putLeased('beat/n2', { by: 'a' }, 2); // a's lease again: written
    const va = (await store.get('beat/n2'))!.version;
    assert.ok(va > vb, 'the refresh rebinds the key to its own lease');
    // Refreshed by a only, past b's lease: the key stays, and the refreshes write nothing.
    for (let i = 0; i < 8; i++) {
      await new Promise((r) => setTimeout(r, 500));
      await store.leases.putLeased('beat/n2', { by: 'a' }, 2);
    }
    assert.deepEqual(await store.get('beat/n2').then((s) => [s?.value, s?.version]), [{ by: 'a' }, va]);
  });

  test('a lock: one holder at a time, its writes fenced; released, another takes it and the old fence fails', async (t) => {
    const other = await etcd.openStore();
    t.after(() => other.close());
    const a = await store.leases.holdLock('lock/o', 5, { node: 'a' }, true);
    assert.ok(a !== null && a > 0);
    assert.equal(await other.leases.holdLock('lock/o', 5, { node: 'b' }, true), null, 'held by a');
    assert.equal(await store.leases.holdLock('lock/o', 5, { node: 'a' }, false), a, 'a keeps it, at the same revision (no write)');
    const fenceA = { key: 'lock/o', version: a! };
    const v = await store.create('fenced/x', 1, fenceA);
    await store.update('fenced/x', 2, v, fenceA);
    await store.batch([{ key: 'fenced/y', value: 1 }], fenceA);
    await store.leases.releaseLock('lock/o');
    const b = await other.leases.holdLock('lock/o', 5, { node: 'b' }, true);
    assert.ok(b !== null && b > a!);
    await assert.rejects(store.create('fenced/z', 1, fenceA), (e: Error & { status?: number }) => e.status === 409);
    await assert.rejects(store.batch([{ key: 'fenced/z', value: 1 }], fenceA), (e: Error & { status?: number }) => e.status === 409);
    await assert.rejects(store.delete('fenced/x', undefined, fenceA), (e: Error & { status?: number }) => e.status === 409);
    assert.deepEqual((await store.get('fenced/x'))?.value, 2, 'a write without the current fence changed nothing');
    assert.equal(await store.leases.holdLock('lock/o', 5, { node: 'a' }, true), null);
    assert.ok((await store.lastRevision('fenced/')) >= v);
    // The holder gone silent: its lease runs out and the lock is free again.
    const deadline = Date.now() + 30_000;
    while ((await store.get('lock/o')) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    assert.ok((await store.leases.holdLock('lock/o', 5, { node: 'a' }, true))! > b!);
  });

  test('the member list names this member; a killed etcd is restarted and serves again', async () => {
    const members = await store.membership.list();
    assert.equal(members.length, 1);
    assert.deepEqual(members[0]!.clientUrls, [member.endpoint]);
    const { leader, member: self } = await store.membership.leader();
    assert.equal(leader, self);
    const pid = member.pid!;
    const restarted = new Promise((r) => member.once('restarted', r));
    process.kill(pid, 'SIGKILL');
    await restarted;
    assert.notEqual(member.pid, pid);
    assert.deepEqual((await store.get('things/a'))?.value, { n: 2 });
  });
});
