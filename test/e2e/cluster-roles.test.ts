// Role changes through the docker CLI on three daemons (loopback addresses of their own): a worker
// promoted becomes a manager (its etcd member joins as a learner and is promoted, its certificate's
// OU follows, `docker node ls` works on it), the original manager demoted becomes a worker
// heartbeating to the others (its etcd member and data gone, its certificate a worker's), the last
// manager cannot be demoted (swarmkit's refusal), nor one whose removal would lose the quorum.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';

const base = 120 + (process.pid % 25) * 5;
const ip = (i: number) => `127.0.0.${base + i}`;

function etcdRuns(dataRoot: string): boolean {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      if (readFileSync(`/proc/${e}/cmdline`, 'utf8').includes(`\0--data-dir\0${dataRoot}/`)) return true;
    } catch {
      // gone meanwhile
    }
  }
  return false;
}

const certOu = (d: TestDaemon) =>
  /OU=([^\n,]+)/.exec(new X509Certificate(readFileSync(join(d.dataRoot, 'cluster/certificates/node.pem'))).subject)?.[1];

async function swarmInfo(d: TestDaemon): Promise<Record<string, any>> {
  return JSON.parse((await d.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
}

describe('promote and demote', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    ds.push(...(await Promise.all([0, 1, 2].map(() => startDaemon()))));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test('a worker promoted, the first manager demoted, refusals', async (t) => {
    const [a, b, c] = ds as [TestDaemon, TestDaemon, TestDaemon];
    const init = await a.docker(['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const token = (await a.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
    for (const [d, i] of [
      [b, 1],
      [c, 2],
    ] as const) {
      const j = await d.docker([
        'swarm',
        'join',
        '--token',
        token,
        '--advertise-addr',
        ip(i),
        '--listen-addr',
        `${ip(i)}:2377`,
        `${ip(0)}:2377`,
      ]);
      assert.equal(j.code, 0, j.stderr + d.output);
    }
    const [ida, idb, idc] = [(await swarmInfo(a)).NodeID, (await swarmInfo(b)).NodeID, (await swarmInfo(c)).NodeID];

    // The last manager: swarmkit's refusal.
    const last = await a.docker(['node', 'demote', ida]);
    assert.notEqual(last.code, 0);
    assert.match(last.stderr, /rpc error: code = FailedPrecondition desc = attempting to demote the last manager of the swarm/);

    // Promotion: b learns it from its next heartbeat answer and starts an etcd member.
    const t0 = Date.now();
    const p = await a.docker(['node', 'promote', idb]);
    assert.equal(p.code, 0, p.stderr);
    assert.match(p.stdout, new RegExp(`Node ${idb} promoted to a manager in the swarm`));
    await until(
      'b serving as a manager',
      async () => {
        const s = await swarmInfo(b);
        return s.LocalNodeState === 'active' && s.ControlAvailable === true && s.Managers === 2 ? true : undefined;
      },
      60_000,
      250,
    );
    t.diagnostic(`promoted worker serving as a manager ${Date.now() - t0} ms after \`docker node promote\``);
    assert.equal(certOu(b), 'swarm-manager');
    assert.ok(etcdRuns(b.dataRoot), 'b runs an etcd member');
    assert.equal((await b.request('GET', '/_ping')).headers['swarm'], 'active/manager');
    const fromB = await b.docker(['node', 'ls', '--format', '{{.ID}} {{.ManagerStatus}}']);
    assert.equal(fromB.code, 0, fromB.stderr);
    await until(
      'b shown reachable by a',
      async () => {
        const r = await a.docker(['node', 'inspect', '--format', '{{.ManagerStatus.Reachability}}', idb]);
        return r.stdout.trim() === 'reachable' ? true : undefined;
      },
      30_000,
      250,
    );
    // With two managers, a demotion would leave one of one: allowed (quorum of the rest is kept).
    // Promote c too, so that three voters run, then demote the first manager.
    assert.equal((await b.docker(['node', 'promote', idc])).code, 0);
    await until(
      'c serving as a manager',
      async () => ((await swarmInfo(c)).ControlAvailable === true && (await swarmInfo(a)).Managers === 3 ? true : undefined),
      60_000,
      250,
    );
    const t1 = Date.now();
    const d = await c.docker(['node', 'demote', ida]);
    assert.equal(d.code, 0, d.stderr);
    assert.match(d.stdout, new RegExp(`Manager ${ida} demoted in the swarm`));
    await until(
      'a running as a worker',
      async () => {
        const s = await swarmInfo(a);
        return s.LocalNodeState === 'active' && s.ControlAvailable === false ? true : undefined;
      },
      60_000,
      250,
    );
    t.diagnostic(`demoted manager running as a worker ${Date.now() - t1} ms after \`docker node demote\``);
    assert.equal(certOu(a), 'swarm-worker');
    await until('a has no etcd any more', async () => (!etcdRuns(a.dataRoot) ? true : undefined), 20_000, 250);
    assert.ok(!existsSync(join(a.dataRoot, 'cluster/etcd')), 'its etcd data is gone');
    assert.match((await a.docker(['node', 'ls'])).stderr, /Worker nodes can't be used to view or modify cluster state/);
    assert.equal((await a.request('GET', '/_ping')).headers['swarm'], 'active/worker');
    // It heartbeats to the others: shown ready as a worker, and the managers list what it knows.
    await until(
      'a ready as a worker on the managers',
      async () => {
        const r = await b.docker(['node', 'inspect', '--format', '{{.Status.State}} {{.Spec.Role}} {{.ManagerStatus}}', ida]);
        return r.stdout.trim() === 'ready worker <nil>' ? true : undefined;
      },
      30_000,
      250,
    );
    const ai = await swarmInfo(a);
    assert.deepEqual(ai.RemoteManagers.map((m: { NodeID: string }) => m.NodeID).sort(), [idb, idc].sort());
    const bi = await swarmInfo(b);
    assert.equal(bi.Managers, 2);
    assert.equal(bi.Nodes, 3);
    // The cluster still writes with its two managers, and a leader is among them.
    assert.equal((await b.docker(['swarm', 'update', '--task-history-limit', '4'])).code, 0);
    const leader = (await b.docker(['node', 'ls', '--format', '{{.ID}} {{.ManagerStatus}}'])).stdout;
    assert.match(leader, new RegExp(`(${idb}|${idc}) Leader`));

    // c stops: demoting b now would leave c alone and unreachable — refused (loss of quorum).
    await c.stop();
    await until(
      'c shown down',
      async () => {
        const r = await b.docker(['node', 'inspect', '--format', '{{.Status.State}}', idc]);
        return r.stdout.trim() === 'down' ? true : undefined;
      },
      30_000,
      500,
    ).catch(() => undefined); // without a quorum b cannot read: either answer is a refusal below
    const q = await b.docker(['node', 'demote', idb]);
    assert.notEqual(q.code, 0);
    assert.match(q.stderr, /loss of quorum|does not have a leader/);
  });
});
