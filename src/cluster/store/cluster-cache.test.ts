// The watch-fed cache and the agents' sync on it, against a real one-member etcd: the copy follows
// the store (puts, deletes, a task moving between nodes), a writer waits until its write is seen,
// a node's long poll wakes for its own tasks only (and for a change landing while its answer was
// being made), and a sync with `since` answers only what changed (plus every ID, so deletions show).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import type { EtcdMember } from './etcd-process.ts';
import { ServicesApi, taskKey } from '../manager/services-api.ts';
import type { ClusterStore } from './store.ts';
import type { TaskRecord } from '../manager/tasks.ts';

const task = (id: string, node: string | undefined, state: TaskRecord['Status']['State'] = 'assigned'): TaskRecord => ({
  ID: id,
  CreatedAt: new Date(0).toISOString(),
  UpdatedAt: new Date(0).toISOString(),
  Labels: {},
  Spec: { ContainerSpec: { Image: 'busybox' } },
  ServiceID: 'svc',
  ServiceName: 'web',
  SpecVersion: 1,
  Slot: 1,
  ...(node ? { NodeID: node } : {}),
  Status: { Timestamp: new Date(0).toISOString(), State: state, Message: '' },
  DesiredState: 'running',
  Restarts: 0,
});

describe('cluster cache and agent sync on a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  let store: ClusterStore;
  let api: ServicesApi;
  before(async () => {
    const etcd = await startTestEtcd();
    dir = etcd.dir;
    member = etcd.member;
    store = await etcd.openStore();
    await store.create(taskKey('t0'), task('t0', 'n1'));
    api = new ServicesApi(store, undefined);
    await api.watch();
  });
  after(async () => {
    await api?.close();
    store?.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('the copy follows the store; the node index follows a task that moves', async () => {
    const c = api.cache;
    assert.deepEqual(
      c.tasksOf('n1').map((t) => t.value.ID),
      ['t0'],
      'from the first read',
    );
    const rev = await store.create(taskKey('t1'), task('t1', 'n1'));
    await c.waitFor('tasks', rev);
    assert.equal(c.tasks.rev >= rev, true);
    assert.deepEqual(
      c
        .tasksOf('n1')
        .map((t) => t.value.ID)
        .sort(),
      ['t0', 't1'],
    );
    const cur = c.task('t1')!;
    const moved = await store.update(taskKey('t1'), { ...cur.value, NodeID: 'n2' }, cur.version);
    await c.waitFor('tasks', moved);
    assert.deepEqual(
      c.tasksOf('n1').map((t) => t.value.ID),
      ['t0'],
    );
    assert.deepEqual(
      c.tasksOf('n2').map((t) => t.value.ID),
      ['t1'],
    );
    await store.delete(taskKey('t1'));
    const mark = await store.put('tasks-mark', {}); // a later revision, outside the prefix
    await until(() => c.tasksOf('n2').length === 0);
    assert.ok(mark > moved);
  });

  test('a batch writes all or nothing', async () => {
    const rev = await store.batch([
      { key: taskKey('b10'), value: task('b10', 'nx') },
      { key: taskKey('b11'), value: task('b11', 'nx') },
    ]);
    await api.cache.waitFor('tasks', rev);
    assert.equal(api.cache.tasksOf('nx').length, 2);
    const b10 = api.cache.task('b10')!;
    // One stale version (b11 is created, not at version 1): neither write happens.
    await assert.rejects(
      store.batch([
        { key: taskKey('b10'), value: { ...b10.value, DesiredState: 'shutdown' }, version: b10.version },
        { key: taskKey('b11'), value: task('b11', 'nx'), version: 1 },
      ]),
      (e: Error & { status?: number }) => e.status === 409,
    );
    assert.equal((await store.get<TaskRecord>(taskKey('b10')))!.value.DesiredState, 'running');
    await store.delete(taskKey('b10'));
    await store.delete(taskKey('b11'));
  });

  test('sync: full, then only what changed since; the long poll wakes for its own node only', async () => {
    await store.create(taskKey('a1'), task('a1', 'na'));
    const r2 = await store.create(taskKey('a2'), task('a2', 'na'));
    await api.cache.waitFor('tasks', r2);
    const full = await api.agents.sync('na', []);
    assert.deepEqual(full.tasks.map((t) => t.ID).sort(), ['a1', 'a2']);
    assert.equal(full.ids, undefined);
    // A report written by the sync is in its own answer.
    const rep = await api.agents.sync(
      'na',
      [{ id: 'a1', status: { Timestamp: new Date().toISOString(), State: 'running', Message: 'started' } }],
      full.digest,
      0,
      { since: full.rev },
    );
    assert.deepEqual(rep.ids?.sort(), ['a1', 'a2']);
    assert.deepEqual(
      rep.tasks.map((t) => [t.ID, t.Status.State]),
      [['a1', 'running']],
      'only the changed task',
    );
    // Nothing new: the poll waits; a change on another node does not end it, one on this node does.
    const t0 = Date.now();
    const poll = api.agents.sync('na', [], rep.digest, 1500, { since: rep.rev });
    await new Promise((r) => setTimeout(r, 200));
    await store.create(taskKey('b1'), task('b1', 'nb'));
    await new Promise((r) => setTimeout(r, 300));
    await store.delete(taskKey('a2'));
    const woke = await poll;
    assert.ok(Date.now() - t0 < 1400, `woken by its own change (${Date.now() - t0} ms)`);
    assert.deepEqual(woke.ids, ['a1'], 'a deleted task drops out of the IDs');
    assert.deepEqual(woke.tasks, []);
    // A `since` from the future (another manager's, further on): a full answer.
    const future = await api.agents.sync('na', [], undefined, 0, { since: (woke.rev ?? 0) + 1000 });
    assert.equal(future.ids, undefined);
    assert.deepEqual(
      future.tasks.map((t) => t.ID),
      ['a1'],
    );
  });
  test('a change applied while the answer is made ends the long poll at once', async () => {
    // The payloads are awaited between reading the node's tasks and waiting for their change: a
    // task created for the node right then (the watch applies it in that gap) must not leave the
    // poll waiting for its whole time.
    let during: (() => Promise<void>) | undefined;
    const hooks = {
      checkRefs: async () => undefined,
      payloads: async () => {
        const f = during;
        during = undefined;
        await f?.();
        return { secrets: {}, configs: {} };
      },
    };
    const api2 = new ServicesApi(store, undefined, hooks);
    await api2.watch();
    try {
      const r1 = await store.create(taskKey('g1'), task('g1', 'ng'));
      await api2.cache.waitFor('tasks', r1);
      const base = await api2.agents.sync('ng', []);
      during = async () => api2.cache.waitFor('tasks', await store.create(taskKey('g2'), task('g2', 'ng'))).then(() => undefined);
      const t0 = Date.now();
      const got = await api2.agents.sync('ng', [], base.digest, 3000);
      const ms = Date.now() - t0;
      assert.deepEqual(got.tasks.map((t) => t.ID).sort(), ['g1', 'g2']);
      assert.notEqual(got.digest, base.digest);
      assert.ok(ms < 2000, `the poll answered after ${ms} ms: the change came during its first answer, its wait is 3 s`);
    } finally {
      await api2.close();
    }
  });
});

async function until(cond: () => boolean, ms = 5000): Promise<void> {
  const end = Date.now() + ms;
  while (!cond()) {
    if (Date.now() > end) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 20));
  }
}
