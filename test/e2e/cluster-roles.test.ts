// Role changes through the docker CLI on three daemons (loopback addresses of their own): a worker
// promoted becomes a manager (its etcd member joins as a learner and is promoted, its certificate's
// OU follows, `docker node ls` works on it); with three managers and one down, a demotion that would
// lose the quorum is refused (swarmkit's words) and the down one can be demoted: restarted, it runs as
// a worker; the original manager demoted becomes a worker heartbeating to the one manager left (its
// etcd member and data gone, its certificate a worker's); the last manager cannot be demoted.
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';
import { joinSwarm } from '../helpers/cluster-nodes.ts';

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
      await joinSwarm(d, token, ip(i), ip(0));
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
    // c promoted too: three voters.
    assert.equal((await b.docker(['node', 'promote', idc])).code, 0);
    await until(
      'c serving as a manager',
      async () => ((await swarmInfo(c)).ControlAvailable === true && (await swarmInfo(a)).Managers === 3 ? true : undefined),
      60_000,
      250,
    );

    // c stops: demoting b would leave a and c with only a reachable — refused (loss of quorum).
    await c.stop();
    await until(
      'c shown down',
      async () => ((await a.docker(['node', 'inspect', '--format', '{{.Status.State}}', idc])).stdout.trim() === 'down' ? true : undefined),
      30_000,
      500,
    );
    const q = await a.docker(['node', 'demote', idb]);
    assert.notEqual(q.code, 0);
    assert.match(
      q.stderr,
      /rpc error: code = FailedPrecondition desc = can't remove member from the raft: this would result in a loss of quorum/,
    );
    // c demoted while it is down (a and b stay reachable): when it starts again it finds out (its
    // etcd member is gone) and runs as a worker.
    assert.equal((await a.docker(['node', 'demote', idc])).code, 0);
    await c.restart();
    await until(
      'c back as a worker',
      async () => {
        const s = await swarmInfo(c);
        return s.LocalNodeState === 'active' && s.ControlAvailable === false ? true : undefined;
      },
      60_000,
      250,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n${c.output.slice(-3000)}`);
    });
    assert.equal(certOu(c), 'swarm-worker');
    assert.ok(!existsSync(join(c.dataRoot, 'cluster/etcd')), "c's etcd data is gone");

    // The first manager demoted while it runs (asked on b): it becomes a worker heartbeating to b.
    const t1 = Date.now();
    const d = await b.docker(['node', 'demote', ida]);
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
    await until(
      'a and c ready as workers on b',
      async () => {
        for (const id of [ida, idc]) {
          const r = await b.docker(['node', 'inspect', '--format', '{{.Status.State}} {{.Spec.Role}} {{.ManagerStatus}}', id]);
          if (r.stdout.trim() !== 'ready worker <nil>') return undefined;
        }
        return true;
      },
      30_000,
      250,
    );
    const ai = await swarmInfo(a);
    assert.deepEqual(
      ai.RemoteManagers.map((m: { NodeID: string }) => m.NodeID),
      [idb],
    );
    const bi = await swarmInfo(b);
    assert.equal(bi.Managers, 1);
    assert.equal(bi.Nodes, 3);
    // b, the one manager left, leads and writes; it cannot be demoted.
    assert.equal((await b.docker(['swarm', 'update', '--task-history-limit', '4'])).code, 0);
    assert.match((await b.docker(['node', 'ls', '--format', '{{.ID}} {{.ManagerStatus}}'])).stdout, new RegExp(`${idb} Leader`));
    assert.match((await b.docker(['node', 'demote', idb])).stderr, /attempting to demote the last manager of the swarm/);
  });
});
