// Cluster mode through the real docker CLI: one node (init, info, node ls, join-token, a stale
// update refused, leave back to inactive), then three daemons on loopback addresses of their own
// (one init, one joins as manager, one as worker; node ls shows 3 Ready nodes; a restarted node
// comes back). Each manager runs its own etcd (ports listen+2, +3). The first node advertises
// generic resources (--node-generic-resource) in /info and its node description.
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';
import { findEtcd, nodeLs } from '../helpers/cluster-nodes.ts';

// A block of loopback addresses per test process, so two runs never share ports.
const base = 20 + (process.pid % 40) * 5;
const ip = (i: number) => `127.0.0.${base + i}`;

describe('cluster mode on one node', () => {
  let d: TestDaemon;
  // The node advertises user-defined resources (--node-generic-resource): a set of named GPUs and a count.
  const GENERIC = ['NVIDIA-GPU=UUID1', 'NVIDIA-GPU=UUID2', 'SSD=3'];
  const GENERIC_WIRE = [
    { NamedResourceSpec: { Kind: 'NVIDIA-GPU', Value: 'UUID1' } },
    { NamedResourceSpec: { Kind: 'NVIDIA-GPU', Value: 'UUID2' } },
    { DiscreteResourceSpec: { Kind: 'SSD', Value: 3 } },
  ];
  before(async () => {
    d = await startDaemon({ args: GENERIC.flatMap((g) => ['--node-generic-resource', g]) });
  });
  after(async () => d?.cleanup());

  test('init, info, node ls, join-token, stale update, leave --force back to inactive', async () => {
    assert.deepEqual((await d.request('GET', '/v1.51/info')).json().GenericResources, GENERIC_WIRE);
    const init = await d.docker(['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    assert.equal(init.code, 0, init.stderr + d.output);
    // As docker-py's ingress test: right after init the ingress network can be removed, and made again.
    const dropped = await d.request('DELETE', '/v1.51/networks/ingress');
    assert.equal(dropped.status, 204, dropped.text());
    const ing = await d.request('POST', '/v1.51/networks/create', { body: { Name: 'ingress', Driver: 'overlay', Ingress: true } });
    assert.equal(ing.status, 201, ing.text());
    const nodeId = /current node \((\w+)\) is now a manager/.exec(init.stdout)?.[1];
    assert.ok(nodeId, init.stdout);
    assert.match(
      init.stdout,
      new RegExp(`docker swarm join --token SWMTKN-1-[0-9a-z]{50}-[0-9a-z]{25} ${ip(0).replace(/\./g, '\\.')}:2377`),
    );
    assert.ok(existsSync(join(d.dataRoot, 'cluster/etcd/member')), 'etcd data under <data-root>/cluster/etcd');

    const info = JSON.parse((await d.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(info.LocalNodeState, 'active');
    assert.equal(info.NodeID, nodeId);
    assert.equal(info.NodeAddr, ip(0));
    assert.equal(info.ControlAvailable, true);
    assert.equal(info.Nodes, 1);
    assert.equal(info.Managers, 1);
    assert.deepEqual(info.RemoteManagers, [{ NodeID: nodeId, Addr: `${ip(0)}:2377` }]);
    assert.equal(info.Cluster.Spec.Orchestration.TaskHistoryRetentionLimit, 5);
    assert.equal((await d.request('GET', '/_ping')).headers['swarm'], 'active/manager');

    const nodes = await nodeLs(d);
    assert.equal(nodes.length, 1);
    assert.equal(nodes[0]!.ID, nodeId);
    assert.equal(nodes[0]!.Self, true);
    assert.equal(nodes[0]!.Status, 'Ready');
    assert.equal(nodes[0]!.ManagerStatus, 'Leader');

    const swarm = (await d.request('GET', '/v1.51/swarm')).json();
    assert.match(swarm.JoinTokens.Worker, /^SWMTKN-1-/);
    assert.notEqual(swarm.JoinTokens.Worker, swarm.JoinTokens.Manager);
    assert.match(swarm.TLSInfo.TrustRoot, /BEGIN CERTIFICATE/);
    const jt = await d.docker(['swarm', 'join-token', '-q', 'worker']);
    assert.equal(jt.stdout.trim(), swarm.JoinTokens.Worker);
    const rotated = await d.docker(['swarm', 'join-token', '--rotate', '-q', 'worker']);
    assert.equal(rotated.code, 0, rotated.stderr);
    assert.notEqual(rotated.stdout.trim(), swarm.JoinTokens.Worker);
    assert.equal(rotated.stdout.trim().split('-')[2], swarm.JoinTokens.Worker.split('-')[2], 'same CA digest');

    // The CLI's update reads the current version; an old one is refused and changes nothing.
    const upd = await d.docker(['swarm', 'update', '--task-history-limit', '7']);
    assert.equal(upd.code, 0, upd.stderr);
    const stale = await d.request('POST', `/v1.51/swarm/update?version=${swarm.Version.Index}`, {
      body: { ...swarm.Spec, Orchestration: { TaskHistoryRetentionLimit: 9 } },
    });
    assert.equal(stale.status, 409);
    assert.match(stale.json().message, /update out of sequence/);
    assert.equal((await d.request('GET', '/v1.51/swarm')).json().Spec.Orchestration.TaskHistoryRetentionLimit, 7);

    const nodeUpd = await d.docker(['node', 'update', '--label-add', 'zone=a', '--availability', 'drain', nodeId]);
    assert.equal(nodeUpd.code, 0, nodeUpd.stderr);
    const inspected = (await d.request('GET', `/v1.51/nodes/${nodeId}`)).json();
    assert.deepEqual(inspected.Description.Resources.GenericResources, GENERIC_WIRE, 'the node advertises its generic resources');
    assert.deepEqual(inspected.Spec, { Labels: { zone: 'a' }, Role: 'manager', Availability: 'drain' });
    assert.equal(
      (await d.request('GET', `/v1.51/nodes?filters=${encodeURIComponent(JSON.stringify({ 'node.label': ['zone=b'] }))}`)).json().length,
      0,
    );
    assert.equal(
      (
        await d.request(
          'GET',
          `/v1.51/nodes?filters=${encodeURIComponent(JSON.stringify({ 'node.label': ['zone=a'], role: ['manager'] }))}`,
        )
      ).json().length,
      1,
    );
    assert.equal((await d.request('GET', `/v1.51/nodes?filters=${encodeURIComponent(JSON.stringify({ role: ['boss'] }))}`)).status, 400);
    assert.equal((await d.request('GET', '/v1.51/nodes/nosuchnode')).status, 404);

    // kill -9 of the daemon: its etcd outlives it; the next daemon replaces that member and is back.
    const etcdPid = findEtcd(d.dataRoot);
    assert.ok(etcdPid, 'an etcd runs for the manager');
    await d.kill9();
    await d.restart();
    const back = await until(
      'the manager back in its cluster',
      async () => {
        const s = JSON.parse((await d.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
        return s.LocalNodeState === 'active' && s.Cluster?.ID === swarm.ID ? s : undefined;
      },
      60_000,
      250,
    );
    assert.equal(back.NodeID, nodeId);
    assert.notEqual(findEtcd(d.dataRoot), etcdPid, 'the old member was replaced');
    assert.equal((await d.request('GET', '/v1.51/swarm')).json().Spec.Orchestration.TaskHistoryRetentionLimit, 7);
    assert.deepEqual(
      (await nodeLs(d)).map((n) => [n.ID, n.Status]),
      [[nodeId, 'Ready']],
    );

    // Secrets after the restart (cluster-secrets.test.ts covers them): the data key is still there.
    const made = await d.docker(['config', 'create', 'c0', '-'], { input: 'after restart' });
    assert.equal(made.code, 0, made.stderr);
    assert.equal(Buffer.from((await d.request('GET', '/v1.51/configs/c0')).json().Spec.Data, 'base64').toString(), 'after restart');
    // Overlay networks (test/e2e/cluster-overlay.test.ts covers them across nodes): made here, gone with the cluster.
    const overlay = await d.docker(['network', 'create', '-d', 'overlay', 'ov1']);
    assert.equal(overlay.code, 0, overlay.stderr);
    assert.match((await d.docker(['network', 'ls', '--format', '{{.Name}} {{.Driver}} {{.Scope}}'])).stdout, /^ov1 overlay swarm$/m);
    const again = await d.docker(['swarm', 'init', '--advertise-addr', ip(0)]);
    assert.match(again.stderr, /This node is already part of a swarm/);

    const leave = await d.docker(['swarm', 'leave']);
    assert.notEqual(leave.code, 0);
    assert.match(leave.stderr, /Removing the last manager erases all current state of the swarm/);
    const forced = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(forced.code, 0, forced.stderr);
    assert.match(forced.stdout, /Node left the swarm/);
    assert.equal((await d.docker(['info', '--format', '{{.Swarm.LocalNodeState}}'])).stdout.trim(), 'inactive');
    assert.equal((await d.request('GET', '/_ping')).headers['swarm'], 'inactive');
    assert.match((await d.docker(['node', 'ls'])).stderr, /This node is not a swarm manager\. Use "docker swarm init"/);
    assert.match((await d.docker(['swarm', 'leave', '--force'])).stderr, /This node is not part of a swarm/);
    assert.ok(!existsSync(join(d.dataRoot, 'cluster')), 'the cluster state is gone');
    assert.doesNotMatch((await d.docker(['network', 'ls', '--format', '{{.Name}}'])).stdout, /^(ov1|ingress)$/m);
    assert.match((await d.docker(['network', 'create', '-d', 'overlay', 'ov1'])).stderr, /This node is not a swarm manager/);
  });
});

describe('cluster mode on three daemons', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    for (let i = 0; i < 3; i++) ds.push(await startDaemon());
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test('a manager and a worker join; node ls shows three Ready nodes; a restarted node comes back', async () => {
    const [a, b, c] = ds as [TestDaemon, TestDaemon, TestDaemon];
    const init = await a.docker(['swarm', 'init', '--advertise-addr', ip(1), '--listen-addr', `${ip(1)}:2377`]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const managerToken = (await a.docker(['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    const workerToken = (await a.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();

    const bad = await c.docker([
      'swarm',
      'join',
      '--token',
      workerToken.replace(/-[0-9a-z]{25}$/, '-0000000000000000000000000'),
      '--advertise-addr',
      ip(3),
      '--listen-addr',
      `${ip(3)}:2377`,
      `${ip(1)}:2377`,
    ]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /A valid join token is necessary/);

    const jb = await b.docker([
      'swarm',
      'join',
      '--token',
      managerToken,
      '--advertise-addr',
      ip(2),
      '--listen-addr',
      `${ip(2)}:2377`,
      `${ip(1)}:2377`,
    ]);
    assert.equal(jb.code, 0, jb.stderr + b.output);
    assert.match(jb.stdout, /This node joined a swarm as a manager/);
    const jc = await c.docker([
      'swarm',
      'join',
      '--token',
      workerToken,
      '--availability',
      'drain',
      '--advertise-addr',
      ip(3),
      '--listen-addr',
      `${ip(3)}:2377`,
      `${ip(1)}:2377`,
    ]);
    assert.equal(jc.code, 0, jc.stderr + c.output);
    assert.match(jc.stdout, /This node joined a swarm as a worker/);
    assert.equal((await c.request('GET', '/_ping')).headers['swarm'], 'active/worker');
    assert.equal((await b.request('GET', '/_ping')).headers['swarm'], 'active/manager');

    for (const m of [a, b]) {
      const nodes = await nodeLs(m);
      assert.equal(nodes.length, 3, JSON.stringify(nodes));
      assert.deepEqual(
        nodes.map((n) => n.Status),
        ['Ready', 'Ready', 'Ready'],
      );
      assert.deepEqual(nodes.map((n) => n.ManagerStatus).sort(), ['', 'Leader', 'Reachable']);
    }
    const workerInfo = JSON.parse((await c.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(workerInfo.ControlAvailable, false);
    assert.equal(workerInfo.RemoteManagers.length, 2);
    assert.match((await c.docker(['node', 'ls'])).stderr, /Worker nodes can't be used to view or modify cluster state/);
    const workerId = workerInfo.NodeID as string;
    assert.equal((await nodeLs(a)).find((n) => n.ID === workerId)?.Availability, 'Drain');

    // A node that is up is not removed without force; a manager not at all.
    const rmUp = await a.docker(['node', 'rm', workerId]);
    assert.match(rmUp.stderr, /is not down and can't be removed/);
    const rmManager = await a.docker([
      'node',
      'rm',
      '--force',
      JSON.parse((await b.docker(['info', '--format', '{{json .Swarm}}'])).stdout).NodeID,
    ]);
    assert.match(rmManager.stderr, /must be demoted to worker before removal/);

    // The worker restarts: it comes back with its identity; the second manager restarts too.
    await c.stop();
    await c.restart();
    await until(
      'the worker back in the cluster',
      async () => {
        const s = JSON.parse((await c.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
        return s.LocalNodeState === 'active' && s.NodeID === workerId ? true : undefined;
      },
      60_000,
      250,
    );
    await b.stop();
    await b.restart();
    await until(
      'the manager back with three ready nodes',
      async () => {
        const nodes = await nodeLs(b);
        return nodes.length === 3 && nodes.every((n) => n.Status === 'Ready') ? true : undefined;
      },
      60_000,
      500,
    );
    // Both managers answer and agree on the cluster after the restart.
    const ida = (await a.request('GET', '/v1.51/swarm')).json().ID;
    assert.equal((await b.request('GET', '/v1.51/swarm')).json().ID, ida);

    const leaveW = await c.docker(['swarm', 'leave']);
    assert.equal(leaveW.code, 0, leaveW.stderr);
    await until(
      'the worker shown down',
      async () => {
        const n = (await nodeLs(a)).find((x) => x.ID === workerId);
        return n?.Status === 'Down' ? true : undefined;
      },
      30_000,
      250,
    );
    const rmDown = await a.docker(['node', 'rm', workerId]);
    assert.equal(rmDown.code, 0, rmDown.stderr);
    assert.equal((await nodeLs(a)).length, 2);

    // The second manager leaves: refused without force (dockerd's words), then its etcd member goes
    // and the first manager keeps serving alone.
    const bId = JSON.parse((await b.docker(['info', '--format', '{{json .Swarm}}'])).stdout).NodeID as string;
    const leaveB = await b.docker(['swarm', 'leave']);
    assert.notEqual(leaveB.code, 0);
    assert.match(
      leaveB.stderr,
      /You are attempting to leave the swarm on a node that is participating as a manager\. The only way to restore a swarm that has lost consensus is to reinitialize it with `--force-new-cluster`/,
    );
    const forcedB = await b.docker(['swarm', 'leave', '--force']);
    assert.equal(forcedB.code, 0, forcedB.stderr);
    assert.equal((await b.request('GET', '/_ping')).headers['swarm'], 'inactive');
    await until(
      'the first manager serving writes alone',
      async () => {
        const r = await a.docker(['swarm', 'update', '--task-history-limit', '3']);
        return r.code === 0 ? true : undefined;
      },
      60_000,
      500,
    );
    // Down once its heartbeat lease (3 periods) runs out, as a worker that left.
    await until(
      'the manager that left shown down',
      async () => ((await nodeLs(a)).find((n) => n.ID === bId)?.Status === 'Down' ? true : undefined),
      30_000,
      250,
    );
  });
});
