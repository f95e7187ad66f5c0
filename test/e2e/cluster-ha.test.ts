// Manager failures on real daemons: three managers and a worker, each in a network namespace of its
// own joined through a "switch" namespace (as cluster-mesh.test.ts). One manager's link is cut (a
// partitioned minority): it answers writes and reads with swarmkit's no-leader error within seconds
// instead of hanging, the majority elects a leader and keeps working, and once the link is back the
// minority serves again. Last, two managers are killed: the survivor has no quorum until
// `docker swarm init --force-new-cluster`, which keeps its services and the worker and drops the
// other managers from the node list. (A leader killed -9, a new leader within seconds, the killed
// manager restarted, a worker killed -9: cluster-3m2w.test.ts, on three managers and two workers.)
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { killShims, killStrayContainerd, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { sh } from '../helpers/outside-host.ts';
import { makeSwitchedNodes, removeSwitchedNodes } from '../helpers/netns-switch.ts';
import { until } from '../helpers/until.ts';
import { findEtcd, nodeLs, joinSwarm, startNodes } from '../helpers/cluster-nodes.ts';

const tag = (process.pid % 10000).toString(36);
const sw = `cha-${tag}-sw`;
const ns = (i: number) => `cha-${tag}-${i}`;
const port = (i: number) => `cha-${tag}-p${i}`;
const underlay = `192.168.${100 + (process.pid % 50)}`;
const addr = (i: number) => `${underlay}.${10 + i}`;
const N = 4; // three managers and a worker
const underlayNodes = { sw, count: N, ns, port, addr };
export const NO_LEADER =
  "rpc error: code = Unknown desc = The swarm does not have a leader. It's possible that too few managers are online. Make sure more than half of the managers are online.";

describe('manager failure: a partitioned minority, a lost quorum', () => {
  const ds: TestDaemon[] = []; // the managers
  const ids: string[] = [];
  let worker: TestDaemon | undefined;
  let workerId = '';
  before(async () => {
    await makeSwitchedNodes(underlayNodes);
    await startNodes(
      [0, 1, 2, 3].map((i) => ({ netns: ns(i) })),
      (d, i) => (i < 3 ? ds.push(d) : (worker = d)),
    );
    await Promise.all([...ds, worker!].map((d) => loadBusybox(d)));
  });
  after(async () => {
    await Promise.all([...ds, ...(worker ? [worker] : [])].map((d) => d.cleanup()));
    await removeSwitchedNodes(underlayNodes);
  });

  test('three managers; a partitioned minority; healing; quorum lost and --force-new-cluster', async (t) => {
    const init = await ds[0]!.docker(['swarm', 'init', '--advertise-addr', addr(0), '--listen-addr', `${addr(0)}:2377`]);
    assert.equal(init.code, 0, init.stderr + ds[0]!.output);
    const token = (await ds[0]!.docker(['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    for (const i of [1, 2]) {
      await joinSwarm(ds[i]!, token, addr(i), addr(0));
    }
    const wt = (await ds[0]!.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
    const w = worker!;
    await joinSwarm(w, wt, addr(3), addr(0));
    workerId = JSON.parse((await w.docker(['info', '--format', '{{json .Swarm}}'])).stdout).NodeID;
    for (const d of ds) ids.push(JSON.parse((await d.docker(['info', '--format', '{{json .Swarm}}'])).stdout).NodeID);
    await until(
      'three ready managers and a worker, one leader',
      async () => {
        const n = await nodeLs(ds[0]!);
        return n.length === 4 && n.every((x) => x.Status === 'Ready') && n.filter((x) => x.ManagerStatus === 'Leader').length === 1
          ? true
          : undefined;
      },
      60_000,
      250,
    );

    // (A leader killed -9, a worker killed -9 and a killed manager restarted: cluster-3m2w.test.ts.)
    const c = await ds[1]!.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'web',
      '--replicas',
      '3',
      'busybox',
      'sleep',
      '600',
    ]);
    assert.equal(c.code, 0, c.stderr);
    await until(
      '3 tasks running',
      async () => {
        const ps = await ds[2]!.docker(['service', 'ps', 'web', '--filter', 'desired-state=running', '--format', '{{.CurrentState}}']);
        return ps.stdout.split('\n').filter((l) => /Running/.test(l)).length === 3 ? true : undefined;
      },
      60_000,
      250,
    );

    // ---- a partitioned minority: the current leader's link is cut -------------------------------
    const curLeader = (await nodeLs(ds[0]!)).find((n) => n.ManagerStatus === 'Leader')!.ID;
    const pi = ids.indexOf(curLeader);
    const minority = ds[pi]!;
    const majority = ds.filter((_, i) => i !== pi);
    await sh('ip', ['netns', 'exec', sw, 'ip', 'link', 'set', port(pi), 'down']);
    const t1 = Date.now();
    // The minority refuses with swarmkit's words, within seconds (not hanging).
    const refused = await until(
      'the minority refusing writes',
      async () => {
        const s = Date.now();
        const r = await minority.request('POST', '/v1.51/services/create', {
          body: { Name: 'nope', TaskTemplate: { ContainerSpec: { Image: 'busybox' } } },
          timeoutMs: 30_000,
        });
        return r.status >= 500 ? { r, ms: Date.now() - s } : undefined;
      },
      60_000,
      200,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${minority.output.slice(-4000)}`);
    });
    t.diagnostic(`the minority refuses writes ${Date.now() - t1} ms after the cut (that request took ${refused.ms} ms)`);
    assert.equal(refused.r.status, 503, refused.r.text());
    assert.equal(refused.r.json().message, NO_LEADER);
    const s2 = Date.now();
    const ls = await minority.docker(['node', 'ls']);
    assert.notEqual(ls.code, 0);
    assert.match(ls.stderr, /The swarm does not have a leader/);
    assert.ok(Date.now() - s2 < 10_000, 'a read on the minority fails fast');
    // The majority elects a leader and keeps serving.
    await until(
      'a leader in the majority',
      async () => {
        const n = await nodeLs(majority[0]!);
        const l = n.find((x) => x.ManagerStatus === 'Leader');
        return l && l.ID !== curLeader ? true : undefined;
      },
      30_000,
      200,
    );
    assert.equal((await majority[1]!.docker(['service', 'scale', '--detach', 'web=4'])).code, 0);
    await until(
      '4 tasks running',
      async () => {
        const ps = await majority[0]!.docker([
          'service',
          'ps',
          'web',
          '--filter',
          'desired-state=running',
          '--format',
          '{{.CurrentState}}',
        ]);
        return ps.stdout.split('\n').filter((l) => /Running/.test(l)).length === 4 ? true : undefined;
      },
      60_000,
      250,
    ).catch(async (err: Error) => {
      const ps = await majority[0]!.docker(['service', 'ps', '--no-trunc', 'web']);
      throw new Error(
        `${err.message}\n${ps.stdout}${ps.stderr}\n${JSON.stringify(await nodeLs(majority[0]!))}\n${majority[0]!.output.slice(-3000)}`,
      );
    });
    // Healing: the minority catches up and serves again.
    await sh('ip', ['netns', 'exec', sw, 'ip', 'link', 'set', port(pi), 'up']);
    const t2 = Date.now();
    await until(
      'the healed node serving the current state',
      async () => {
        const r = await minority.docker(['service', 'inspect', '--format', '{{.Spec.Mode.Replicated.Replicas}}', 'web']);
        return r.code === 0 && r.stdout.trim() === '4' ? true : undefined;
      },
      60_000,
      250,
    );
    t.diagnostic(`the healed minority serves again ${Date.now() - t2} ms after the link came back`);
    await until(
      'all four ready again',
      async () => {
        const n = await nodeLs(minority);
        return n.length === 4 && n.every((x) => x.Status === 'Ready') ? true : undefined;
      },
      60_000,
      250,
    );

    // ---- quorum lost: two managers gone; `swarm init --force-new-cluster` on the survivor ----------
    const [last, ...gone] = ds as [TestDaemon, ...TestDaemon[]];
    for (const d of gone) {
      const pid = findEtcd(d.dataRoot);
      await d.kill9();
      if (pid) process.kill(pid, 'SIGKILL');
      await killStrayContainerd(d.execRoot);
      await killShims(d.execRoot);
    }
    await until(
      'the survivor without a quorum',
      async () => ((await last.docker(['node', 'ls'])).stderr.includes('The swarm does not have a leader') ? true : undefined),
      60_000,
      250,
    );
    const t3 = Date.now();
    const forced = await last.docker(['swarm', 'init', '--force-new-cluster', '--task-history-limit', '7']);
    assert.equal(forced.code, 0, forced.stderr + last.output.slice(-3000));
    t.diagnostic(`\`swarm init --force-new-cluster\` answered in ${Date.now() - t3} ms`);
    const after = await until(
      'the forced cluster: this manager and the worker, ready',
      async () => {
        const n = await nodeLs(last);
        return n.every((x) => x.Status === 'Ready') ? n : undefined;
      },
      30_000,
      250,
    );
    assert.deepEqual(
      after.map((n) => [n.ID, n.ManagerStatus]).sort(),
      [
        [ids[0], 'Leader'],
        [workerId, ''],
      ].sort(),
      'the other managers are dropped from the node list; the worker stays',
    );
    assert.equal(
      (await last.request('GET', '/v1.51/swarm')).json().Spec.Orchestration.TaskHistoryRetentionLimit,
      7,
      "the request's spec merged in",
    );
    const si = JSON.parse((await last.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(si.Managers, 1);
    assert.equal(si.NodeID, ids[0]);
    // The services survive and their tasks come back on the one node left.
    await until(
      '4 tasks running on the survivor',
      async () => {
        const ps = await last.docker(['service', 'ps', 'web', '--filter', 'desired-state=running', '--format', '{{.CurrentState}}']);
        return ps.stdout.split('\n').filter((l) => /Running/.test(l)).length === 4 ? true : undefined;
      },
      60_000,
      250,
    );
    assert.equal((await last.docker(['swarm', 'update', '--task-history-limit', '2'])).code, 0, 'writes work again');
    assert.equal((await last.docker(['service', 'rm', 'web'])).code, 0);
  });
});
