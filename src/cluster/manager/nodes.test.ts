// Node records, addresses and the cluster spec, without a cluster: filters, lookup order, update and
// removal checks with swarmkit's messages, address parsing, spec defaults and what is refused.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { certificateIps, parseAddr } from '../node/addresses.ts';
import { checkInitNetworking } from '../init-request.ts';
import { checkNodeSpec, checkRemovable, filterNodes, findNode, nodeView, type NodeRecord } from './nodes.ts';
import { checkSpec, mergeInitSpec, withDefaults } from '../ca/swarm-object.ts';

const node = (
  ID: string,
  Hostname: string,
  role: 'manager' | 'worker',
  labels: Record<string, string> = {},
  engine: Record<string, string> = {},
): NodeRecord => ({
  ID,
  CreatedAt: '',
  UpdatedAt: '',
  Spec: { Labels: labels, Role: role, Availability: 'active' },
  Description: { Hostname, Engine: { EngineVersion: 'x', Labels: engine, Plugins: [] } },
  Addr: '10.0.0.1',
  ...(role === 'manager' ? { ManagerAddr: '10.0.0.1:2377' } : {}),
});
const nodes = [
  node('aaa111', 'host-a', 'manager', { zone: 'x' }),
  node('aab222', 'host-b', 'worker', { zone: 'y' }, { ssd: 'yes' }),
  node('ccc333', 'host-b', 'worker'),
];
const ids = (list: NodeRecord[]) => list.map((n) => n.ID);

test('node filters: id prefix, name, role, labels; unknown filters and values are 400s', () => {
  const f = (o: Record<string, string[]>) => ids(filterNodes(nodes, new Map(Object.entries(o))));
  assert.deepEqual(f({}), ['aaa111', 'aab222', 'ccc333']);
  assert.deepEqual(f({ id: ['aa'] }), ['aaa111', 'aab222']);
  assert.deepEqual(f({ role: ['worker'] }), ['aab222', 'ccc333']);
  assert.deepEqual(f({ name: ['host-a'] }), ['aaa111']);
  assert.deepEqual(f({ 'node.label': ['zone=y'] }), ['aab222']);
  assert.deepEqual(f({ 'node.label': ['zone'] }), ['aaa111', 'aab222']);
  assert.deepEqual(f({ label: ['ssd'] }), ['aab222']);
  assert.deepEqual(f({ membership: ['pending'] }), []);
  assert.throws(() => f({ role: ['boss'] }), /invalid filter 'role=boss'/);
  assert.throws(() => f({ colour: ['red'] }), /invalid filter 'colour'/);
});

test('lookup: full ID, then hostname, then a unique prefix; ambiguity and absence are errors', () => {
  assert.equal(findNode(nodes, 'aab222').ID, 'aab222');
  assert.equal(findNode(nodes, 'host-a').ID, 'aaa111');
  assert.equal(findNode(nodes, 'cc').ID, 'ccc333');
  assert.throws(() => findNode(nodes, 'host-b'), /ambiguous/);
  assert.throws(() => findNode(nodes, 'aa'), /ambiguous/);
  assert.throws(
    () => findNode(nodes, 'zzz'),
    (e: Error & { status?: number }) => e.status === 404 && e.message === 'node zzz not found',
  );
});

test('view: Status from the heartbeat, ManagerStatus for managers only', () => {
  const v = nodeView(nodes[0]!, 12, { up: true, leader: true });
  assert.deepEqual(v.Version, { Index: 12 });
  assert.deepEqual(v.Status, { State: 'ready', Addr: '10.0.0.1' });
  assert.deepEqual(v.ManagerStatus, { Leader: true, Reachability: 'reachable', Addr: '10.0.0.1:2377' });
  const w = nodeView(nodes[1]!, 3, { up: false, leader: false });
  assert.equal((w.Status as { State: string }).State, 'down');
  assert.equal(w.ManagerStatus, undefined);
});

test('update and removal checks', () => {
  const cur = nodes[1]!.Spec;
  assert.deepEqual(checkNodeSpec(cur, { Labels: { a: 'b' }, Availability: 'drain' }), {
    Labels: { a: 'b' },
    Role: 'worker',
    Availability: 'drain',
  });
  assert.throws(() => checkNodeSpec(cur, { Availability: 'sleep' }), /invalid availability/);
  assert.throws(() => checkNodeSpec(cur, { Labels: { a: 1 } }), /invalid Labels/);
  assert.equal(checkNodeSpec(cur, { Role: 'manager' }).Role, 'manager', 'a promotion (the manager applies it)');
  assert.throws(() => checkNodeSpec(cur, { Role: 'boss' }), /invalid role/);
  assert.throws(() => checkRemovable(nodes[1]!, true, false), /is not down and can't be removed/);
  checkRemovable(nodes[1]!, true, true);
  checkRemovable(nodes[1]!, false, false);
  assert.throws(() => checkRemovable(nodes[0]!, false, true), /must be demoted to worker before removal/);
});

test('addresses: ports, interfaces, certificate IPs', () => {
  assert.deepEqual(parseAddr('127.0.0.5', 2377, 'x'), { host: '127.0.0.5', port: 2377 });
  assert.deepEqual(parseAddr('127.0.0.5:4000', 2377, 'x'), { host: '127.0.0.5', port: 4000 });
  assert.deepEqual(parseAddr(':4000', 2377, 'x'), { host: '0.0.0.0', port: 4000 });
  assert.deepEqual(parseAddr('[::1]:4000', 2377, 'x'), { host: '::1', port: 4000 });
  assert.deepEqual(parseAddr('lo', 2377, 'x'), { host: '127.0.0.1', port: 2377 });
  assert.throws(() => parseAddr('nosuchif0', 2377, 'x'), /no such interface/);
  assert.throws(() => parseAddr('1.2.3.4:70000', 2377, 'x'), /port out of range/);
  assert.deepEqual(certificateIps('127.0.0.9', '0.0.0.0'), ['127.0.0.9', '127.0.0.1']);
  assert.deepEqual(certificateIps('10.1.1.1', '10.1.1.1'), ['10.1.1.1']);
});

test('cluster spec: dockerd defaults fill zeros; external CAs are 501; bad pools are 400', () => {
  const s = withDefaults({ Orchestration: { TaskHistoryRetentionLimit: 9 }, Dispatcher: { HeartbeatPeriod: 0 } });
  assert.equal(s.Name, 'default');
  assert.equal((s.Orchestration as { TaskHistoryRetentionLimit: number }).TaskHistoryRetentionLimit, 9);
  assert.equal((s.Dispatcher as { HeartbeatPeriod: number }).HeartbeatPeriod, 5e9);
  assert.equal((s.Raft as { ElectionTick: number }).ElectionTick, 10);
  checkSpec(s);
  checkSpec(withDefaults({ EncryptionConfig: { AutoLockManagers: true } }));
  assert.throws(() => checkSpec(withDefaults({ EncryptionConfig: { AutoLockManagers: 'yes' } })), /must be a boolean/);
  assert.throws(
    () => checkSpec(withDefaults({ CAConfig: { ExternalCAs: [{ URL: 'https://ca' }] } })),
    (e: Error & { status?: number }) => e.status === 501,
  );
  assert.throws(() => withDefaults({ Raft: 7 }), /invalid Spec.Raft/);
  assert.deepEqual(checkInitNetworking({}), { DataPathPort: 4789, DefaultAddrPool: ['10.0.0.0/8'], SubnetSize: 24 });
  assert.deepEqual(checkInitNetworking({ DataPathPort: 7789, DefaultAddrPool: ['10.20.0.0/16'], SubnetSize: 26 }), {
    DataPathPort: 7789,
    DefaultAddrPool: ['10.20.0.0/16'],
    SubnetSize: 26,
  });
  assert.throws(() => checkInitNetworking({ DataPathPort: 80 }), /out of range/);
  assert.throws(() => checkInitNetworking({ DefaultAddrPool: ['10.0.0.0/24'], SubnetSize: 16 }), /SubnetSize/);
});

test("force-new-cluster's spec merge: non-zero fields win, autolock as given", () => {
  const cur = withDefaults({ Orchestration: { TaskHistoryRetentionLimit: 9 }, EncryptionConfig: { AutoLockManagers: true } });
  const m = mergeInitSpec(cur, { Orchestration: { TaskHistoryRetentionLimit: 3 }, Dispatcher: { HeartbeatPeriod: 0 }, Labels: {} });
  assert.equal((m.Orchestration as { TaskHistoryRetentionLimit: number }).TaskHistoryRetentionLimit, 3);
  assert.equal((m.Dispatcher as { HeartbeatPeriod: number }).HeartbeatPeriod, 5e9, 'zero keeps the current value');
  assert.deepEqual(m.EncryptionConfig, { AutoLockManagers: false }, 'dockerd takes AutoLockManagers as the request gives it');
  assert.equal(
    (mergeInitSpec(cur, { EncryptionConfig: { AutoLockManagers: true } }).EncryptionConfig as Record<string, boolean>).AutoLockManagers,
    true,
  );
  assert.equal(
    (cur.Orchestration as { TaskHistoryRetentionLimit: number }).TaskHistoryRetentionLimit,
    9,
    'the current spec is not changed',
  );
});
