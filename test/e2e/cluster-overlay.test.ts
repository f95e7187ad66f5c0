// Overlay networks across hosts: three daemons, each in a network namespace of its own joined by a
// veth to a bridge in a "switch" namespace (so VXLAN really crosses links, and the host's firewall,
// whose FORWARD chain sees bridged traffic, stays out of it), form a cluster (two managers, one
// worker); an attachable overlay network made on one manager is listed by the managers; plain
// containers on both managers and on the worker get cluster-unique addresses, ping each other and
// resolve each other's names and aliases; removal leaves no vxlan, bridge or fdb entry behind;
// refusals (encrypted, non-attachable, in use, on a worker, outside a cluster).
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import type { TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { sh } from '../helpers/outside-host.ts';
import { makeSwitchedNodes, removeSwitchedNodes } from '../helpers/netns-switch.ts';
import { until } from '../helpers/until.ts';
import { joinSwarm, startNodes } from '../helpers/cluster-nodes.ts';

const tag = (process.pid % 10000).toString(36);
const sw = `ovt-${tag}-sw`;
const ns = (i: number) => `ovt-${tag}-${i}`;
// An underlay /24 of its own per test process.
const underlay = `192.168.${200 + (process.pid % 50)}`;
const addr = (i: number) => `${underlay}.${10 + i}`;
const N = 3;
const underlayNodes = { sw, count: N, ns, port: (i: number) => `ovt-${tag}-p${i}`, addr };

async function inNs(i: number, cmd: string): Promise<string> {
  return sh('ip', ['netns', 'exec', ns(i), 'sh', '-c', cmd]);
}

describe('overlay networks on three daemons in network namespaces of their own', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    await makeSwitchedNodes(underlayNodes);
    await startNodes(
      [0, 1, 2].map((i) => ({ netns: ns(i) })),
      (d) => ds.push(d),
    );
    await Promise.all(ds.map((d) => loadBusybox(d)));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
    await removeSwitchedNodes(underlayNodes);
  });

  test('create, list everywhere, ping and DNS across nodes, removal leaves nothing', async (t) => {
    /** Milliseconds until `name` resolves in container `who` on `d` (how fast a new endpoint spreads). */
    const spread = async (d: TestDaemon, who: string, name: string) => {
      const t1 = Date.now();
      await until(`${name} resolves in ${who}`, async () =>
        (await d.docker(['exec', who, 'nslookup', name])).code === 0 ? true : undefined,
      );
      return Date.now() - t1;
    };
    const [a, b, c] = ds as [TestDaemon, TestDaemon, TestDaemon];
    const outside = await a.docker(['network', 'create', '-d', 'overlay', 'ov0']);
    assert.notEqual(outside.code, 0);
    assert.match(outside.stderr, /This node is not a swarm manager\. Use "docker swarm init"/);

    // A data-path port of its own: the vxlan devices must take it from the cluster.
    const init = await a.docker([
      'swarm',
      'init',
      '--data-path-port',
      '4790',
      '--advertise-addr',
      addr(0),
      '--listen-addr',
      `${addr(0)}:2377`,
    ]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const managerToken = (await a.docker(['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    const workerToken = (await a.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
    // b joins as a manager, c as a worker (no store: its overlay state comes through the managers).
    for (const [d, i, token] of [
      [b, 1, managerToken],
      [c, 2, workerToken],
    ] as const) {
      await joinSwarm(d, token, addr(i), addr(0));
    }

    // The ingress network exists from init, swarm-scoped, on every manager.
    const ingress = JSON.parse((await b.docker(['network', 'inspect', 'ingress'])).stdout)[0];
    assert.equal(ingress.Scope, 'swarm');
    assert.equal(ingress.Driver, 'overlay');
    assert.equal(ingress.Ingress, true);
    assert.equal(ingress.IPAM.Config[0].Subnet, '10.0.0.0/24');

    const enc = await a.docker(['network', 'create', '-d', 'overlay', '--opt', 'encrypted', 'ovenc']);
    assert.notEqual(enc.code, 0);
    assert.match(enc.stderr, /encrypted overlay networks .* not built/);

    const t0 = Math.floor(Date.now() / 1000) - 1;
    const created = await a.docker(['network', 'create', '-d', 'overlay', '--attachable', 'ov1']);
    assert.equal(created.code, 0, created.stderr + a.output);
    const id = created.stdout.trim();
    const dup = await b.docker(['network', 'create', '-d', 'overlay', 'ov1']);
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /already exists/);

    const onWorker = await c.docker(['network', 'create', '-d', 'overlay', 'ovw']);
    assert.notEqual(onWorker.code, 0);
    assert.match(onWorker.stderr, /Worker nodes can't be used to view or modify cluster state/);

    for (const d of ds) {
      const n = await until('the network on every node', async () => {
        const r = await d.docker(['network', 'inspect', 'ov1']);
        return r.code === 0 ? JSON.parse(r.stdout)[0] : undefined;
      });
      assert.equal(n.Id, id);
      assert.equal(n.Scope, 'swarm');
      assert.equal(n.Attachable, true);
      assert.equal(n.IPAM.Config[0].Subnet, '10.0.1.0/24');
      assert.equal(n.Options['com.docker.network.driver.overlay.vxlanid_list'], '4097');
      // Managers list every swarm network; a worker those its containers use (none yet).
      const ls = await d.docker(['network', 'ls', '--filter', 'driver=overlay', '--format', '{{.Name}} {{.Scope}}']);
      assert.deepEqual(ls.stdout.trim().split('\n').filter(Boolean).sort(), d === c ? [] : ['ingress swarm', 'ov1 swarm']);
    }

    // A non-attachable overlay network refuses plain containers.
    assert.equal((await a.docker(['network', 'create', '-d', 'overlay', 'ovsvc'])).code, 0);
    const refused = await a.docker(['run', '--rm', '--network', 'ovsvc', 'busybox', 'true']);
    assert.notEqual(refused.code, 0);
    assert.match(refused.stderr, /not manually attachable/);

    const r1 = await a.docker(['run', '-d', '--name', 'one', '--network', 'ov1', '--network-alias', 'first', 'busybox', 'sleep', '600']);
    assert.equal(r1.code, 0, r1.stderr + a.output);
    const r2 = await b.docker(['run', '-d', '--name', 'two', '--network', 'ov1', 'busybox', 'sleep', '600']);
    assert.equal(r2.code, 0, r2.stderr + b.output);
    t.diagnostic(`a container on manager b resolves on manager a ${await spread(a, 'one', 'two')} ms after its run returned`);
    const ipOf = async (d: TestDaemon, name: string) =>
      (await d.docker(['inspect', '-f', '{{(index .NetworkSettings.Networks "ov1").IPAddress}}', name])).stdout.trim();
    const ip1 = await ipOf(a, 'one');
    const ip2 = await ipOf(b, 'two');
    assert.match(ip1, /^10\.0\.1\.\d+$/);
    assert.match(ip2, /^10\.0\.1\.\d+$/);
    assert.notEqual(ip1, ip2, 'addresses are unique across nodes');

    // The kernel side on node a: a vxlan with the network's VNI, the node's address and the
    // cluster's port, learning off, and an fdb entry for container two's MAC behind node b's address.
    const vx = await inNs(0, `ip -d link show vx-${id.slice(0, 12)}`);
    assert.match(vx, new RegExp(`vxlan id 4097 .*local ${addr(0).replace(/\./g, '\\.')} .*dstport 4790`, 's'));
    assert.match(vx, /nolearning/);
    await until('the fdb entry of the remote container', async () =>
      (await inNs(0, `bridge fdb show dev vx-${id.slice(0, 12)}`)).includes(`dst ${addr(1)}`) ? true : undefined,
    );

    const ping = await a.docker(['exec', 'one', 'ping', '-c', '5', '-i', '0.2', '-W', '2', ip2]);
    assert.equal(ping.code, 0, ping.stdout + ping.stderr);
    t.diagnostic(`ping across nodes over VXLAN: ${/min\/avg\/max = (\S+)/.exec(ping.stdout)?.[1] ?? ping.stdout} ms (min/avg/max)`);
    const byName = await until('name resolution across nodes', async () => {
      const r = await b.docker(['exec', 'two', 'nslookup', 'one']);
      return r.code === 0 && r.stdout.includes(ip1) ? r.stdout : undefined;
    });
    assert.ok(byName.includes(ip1));
    const alias = await b.docker(['exec', 'two', 'ping', '-c', '1', '-W', '2', 'first']);
    assert.equal(alias.code, 0, alias.stdout + alias.stderr);
    assert.match(alias.stdout, new RegExp(ip1.replace(/\./g, '\\.')));
    const back = await a.docker(['exec', 'one', 'ping', '-c', '1', '-W', '2', 'two']);
    assert.equal(back.code, 0, back.stdout + back.stderr);

    // In use: refused; the worker has no devices for it (no local endpoint yet).
    const inUse = await b.docker(['network', 'rm', 'ov1']);
    assert.notEqual(inUse.code, 0);
    assert.match(inUse.stderr, /has active endpoints/);
    assert.doesNotMatch(await inNs(2, 'ip -o link show'), /vx-|ov-/);

    // A plain container on the worker: its address claimed and published through a manager.
    const r3 = await c.docker(['run', '-d', '--name', 'three', '--network', 'ov1', 'busybox', 'sleep', '600']);
    assert.equal(r3.code, 0, r3.stderr + c.output);
    t.diagnostic(`a container on worker c resolves on manager a ${await spread(a, 'one', 'three')} ms after its run returned`);
    const ip3 = await ipOf(c, 'three');
    assert.ok(![ip1, ip2].includes(ip3), `${ip3} is unique`);
    const wls = await c.docker(['network', 'ls', '--filter', 'driver=overlay', '--format', '{{.Name}}']);
    assert.deepEqual(wls.stdout.trim().split('\n'), ['ov1']);
    const fromWorker = await until("the worker resolves and reaches a manager node's container", async () => {
      const r = await c.docker(['exec', 'three', 'ping', '-c', '1', '-W', '2', 'one']);
      return r.code === 0 ? r.stdout : undefined;
    });
    assert.match(fromWorker, new RegExp(ip1.replace(/\./g, '\\.')));
    const toWorker = await until("a manager node resolves and reaches the worker's container", async () => {
      const r = await b.docker(['exec', 'two', 'ping', '-c', '1', '-W', '2', 'three']);
      return r.code === 0 ? r.stdout : undefined;
    });
    assert.match(toWorker, new RegExp(ip3.replace(/\./g, '\\.')));
    assert.notEqual((await c.docker(['network', 'rm', 'ov1'])).code, 0);

    // Hot connect and disconnect of a running container on the default bridge.
    assert.equal((await b.docker(['run', '-d', '--name', 'four', 'busybox', 'sleep', '600'])).code, 0);
    const conn = await b.docker(['network', 'connect', '--alias', 'fourth', 'ov1', 'four']);
    assert.equal(conn.code, 0, conn.stderr + b.output);
    const ip4 = await ipOf(b, 'four');
    assert.ok(![ip1, ip2, ip3].includes(ip4), `${ip4} is unique`);
    // (Its resolv.conf is the default bridge's, written at its start: it reaches the others by address.)
    await until('the connected container reaches and is reached (by its alias) across nodes', async () => {
      const out = await b.docker(['exec', 'four', 'ping', '-c', '1', '-W', '2', ip1]);
      const back = await a.docker(['exec', 'one', 'ping', '-c', '1', '-W', '2', 'fourth']);
      return out.code === 0 && back.code === 0 && back.stdout.includes(ip4) ? true : undefined;
    });
    const disc = await b.docker(['network', 'disconnect', 'ov1', 'four']);
    assert.equal(disc.code, 0, disc.stderr + b.output);
    await until('the disconnected container unknown to the others', async () =>
      (await a.docker(['exec', 'one', 'nslookup', 'fourth'])).code !== 0 ? true : undefined,
    );
    assert.equal((await b.docker(['rm', '-f', 'four'])).code, 0);

    // The worker restarts: its container stopped (its endpoint released through a manager), the
    // node comes back into the cluster, and the container started again is reachable by name.
    assert.equal(await c.stop(), 0);
    await until("the worker's endpoint released", async () =>
      (await a.docker(['exec', 'one', 'nslookup', 'three'])).code !== 0 ? true : undefined,
    );
    await c.restart();
    await until('the restarted worker starts its container on the overlay network', async () =>
      (await c.docker(['start', 'three'])).code === 0 ? true : undefined,
    );
    await until("a manager node reaches the restarted worker's container by name", async () =>
      (await a.docker(['exec', 'one', 'ping', '-c', '1', '-W', '2', 'three'])).code === 0 ? true : undefined,
    );

    // Removal: the containers go, then the network; no overlay device or fdb entry is left.
    assert.equal((await a.docker(['rm', '-f', 'one'])).code, 0);
    assert.equal((await b.docker(['rm', '-f', 'two'])).code, 0);
    assert.equal((await c.docker(['rm', '-f', 'three'])).code, 0);
    for (const i of [0, 1, 2])
      await until(`node ${i} without overlay devices`, async () => (/vx-|ov-/.test(await inNs(i, 'ip -o link show')) ? undefined : true));
    const rm = await b.docker(['network', 'rm', 'ov1']);
    assert.equal(rm.code, 0, rm.stderr + b.output);
    for (const d of ds)
      await until('the network gone everywhere', async () =>
        (await d.docker(['network', 'inspect', 'ov1'])).code !== 0 ? true : undefined,
      );
    for (let i = 0; i < N; i++) assert.doesNotMatch(await inNs(i, 'bridge fdb show; ip -o link show'), /vx-|ov-/);

    // Managers announce swarm networks as swarm-scoped events (the manager that did not make it too).
    const until1 = String(Math.floor(Date.now() / 1000) + 1);
    const evs = await b.docker([
      'events',
      '--since',
      String(t0),
      '--until',
      until1,
      '--filter',
      'type=network',
      '--filter',
      'scope=swarm',
      '--format',
      '{{.Action}} {{.Actor.Attributes.name}} {{.Scope}}',
    ]);
    assert.match(evs.stdout, /^create ov1 swarm$/m, evs.stdout + evs.stderr);
    assert.match(evs.stdout, /^remove ov1 swarm$/m, evs.stdout);
  });
});
