// Services on overlay networks across hosts: two daemons (a manager and a worker), each in a network
// namespace of its own joined through a "switch" namespace as in cluster-overlay.test.ts, run a
// 2-replica service on an overlay network (one task per node). A container on the network (attachable)
// resolves `<service>` to the service's VIP (Endpoint.VirtualIPs) and `tasks.<service>` to both tasks,
// the VIP answers from both tasks over time (DNAT per task in the client's namespace), tasks reach
// each other across nodes by container and task name; endpoint mode dnsrr resolves `<service>` to
// the tasks themselves; a published port (routing mesh) answers on every node from both tasks;
// removal frees the VIP so the network can go.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { sh } from '../helpers/outside-host.ts';
import { until } from '../helpers/until.ts';

const tag = (process.pid % 10000).toString(36);
const sw = `msh-${tag}-sw`;
const ns = (i: number) => `msh-${tag}-${i}`;
const underlay = `192.168.${150 + (process.pid % 50)}`;
const addr = (i: number) => `${underlay}.${10 + i}`;
const N = 2;
// Each task answers every TCP connection on port 80 with its hostname (its container's short ID).
// (nc: Debian's static busybox wget crashes.)
const SERVE = 'while true; do hostname | nc -l -p 80; done';

async function inNs(i: number, cmd: string): Promise<string> {
  return sh('ip', ['netns', 'exec', ns(i), 'sh', '-c', cmd]);
}

const lookup = (out: string): string[] =>
  [
    ...out
      .split(/^Name:/m)
      .slice(1)
      .join('\n')
      .matchAll(/Address(?: \d+)?:\s+(\d+\.\d+\.\d+\.\d+)/g),
  ]
    .map((m) => m[1]!)
    .sort();

describe('services on an overlay network: VIP, tasks.<service>, dnsrr across two nodes', () => {
  const ds: TestDaemon[] = [];
  before(async () => {
    await sh('ip', ['netns', 'add', sw]);
    await sh('ip', ['netns', 'exec', sw, 'sh', '-c', 'ip link add br0 type bridge && ip link set br0 up']);
    for (let i = 0; i < N; i++) {
      await sh('ip', ['netns', 'add', ns(i)]);
      await sh('ip', ['link', 'add', `msh-${tag}-p${i}`, 'netns', sw, 'type', 'veth', 'peer', 'name', 'uplink', 'netns', ns(i)]);
      await sh('ip', ['netns', 'exec', sw, 'ip', 'link', 'set', `msh-${tag}-p${i}`, 'master', 'br0', 'up']);
      await inNs(i, `ip link set lo up && ip addr add ${addr(i)}/24 dev uplink && ip link set uplink up`);
    }
    ds.push(...(await Promise.all([0, 1].map((i) => startDaemon({ netns: ns(i) })))));
    await Promise.all(ds.map((d) => loadBusybox(d)));
  });
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
    for (let i = 0; i < N; i++) await run('ip', ['netns', 'del', ns(i)]);
    await run('ip', ['netns', 'del', sw]);
  });

  test('VIP balancing, tasks.<service>, names across nodes, dnsrr', async (t) => {
    const [a, b] = ds as [TestDaemon, TestDaemon];
    const init = await a.docker(['swarm', 'init', '--advertise-addr', addr(0), '--listen-addr', `${addr(0)}:2377`]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const token = (await a.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
    const j = await b.docker([
      'swarm',
      'join',
      '--token',
      token,
      '--advertise-addr',
      addr(1),
      '--listen-addr',
      `${addr(1)}:2377`,
      `${addr(0)}:2377`,
    ]);
    assert.equal(j.code, 0, j.stderr + b.output);
    await until('two nodes ready', async () => {
      const r = await a.docker(['node', 'ls', '--format', '{{.Status}}']);
      return r.stdout
        .trim()
        .split('\n')
        .filter((s) => s === 'Ready').length === 2
        ? true
        : undefined;
    });

    const net = await a.docker(['network', 'create', '-d', 'overlay', '--attachable', 'ovs']);
    assert.equal(net.code, 0, net.stderr + a.output);
    const netId = net.stdout.trim();
    const missing = await a.docker(['service', 'create', '--detach', '--network', 'nosuch', 'busybox', 'true']);
    assert.notEqual(missing.code, 0);

    const t0 = Date.now();
    const c = await a.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'web',
      '--replicas',
      '2',
      '--network',
      'name=ovs,alias=www',
      'busybox',
      'sh',
      '-c',
      SERVE,
    ]);
    assert.equal(c.code, 0, c.stderr + a.output);
    const svc = JSON.parse((await a.docker(['service', 'inspect', 'web'])).stdout)[0];
    assert.equal(svc.Spec.TaskTemplate.Networks[0].Target, netId, 'the target is stored as the network ID');
    assert.equal(svc.Endpoint.VirtualIPs.length, 1);
    assert.equal(svc.Endpoint.VirtualIPs[0].NetworkID, netId);
    const vip = String(svc.Endpoint.VirtualIPs[0].Addr).split('/')[0]!;
    assert.match(svc.Endpoint.VirtualIPs[0].Addr, /^10\.0\.1\.\d+\/24$/);

    // One task per node, both running.
    const taskIps = await until('both tasks running on their nodes', async () => {
      const ips: string[] = [];
      for (const d of ds) {
        const ps = await d.docker(['ps', '-q', '--filter', 'label=com.docker.swarm.service.name=web']);
        const id = ps.stdout.trim();
        if (!id || id.includes('\n')) return undefined;
        const ip = (await d.docker(['inspect', '-f', '{{(index .NetworkSettings.Networks "ovs").IPAddress}}', id])).stdout.trim();
        if (!ip) return undefined;
        ips.push(ip);
      }
      return ips.sort();
    });
    t.diagnostic(`2 tasks on the overlay network running on 2 nodes ${Date.now() - t0} ms after service create`);
    assert.ok(!taskIps.includes(vip));

    const r = await a.docker(['run', '-d', '--name', 'client', '--network', 'ovs', 'busybox', 'sleep', '600']);
    assert.equal(r.code, 0, r.stderr + a.output);
    const vipAnswer = await until('<service> resolves to the VIP', async () => {
      const x = await a.docker(['exec', 'client', 'nslookup', 'web']);
      return x.code === 0 ? lookup(x.stdout) : undefined;
    });
    assert.deepEqual(vipAnswer, [vip]);
    const tasksAnswer = await until('tasks.<service> resolves to both tasks', async () => {
      const x = await a.docker(['exec', 'client', 'nslookup', 'tasks.web']);
      const got = x.code === 0 ? lookup(x.stdout) : [];
      return got.length === 2 ? got : undefined;
    });
    assert.deepEqual(tasksAnswer, taskIps);

    // The VIP answers, from both tasks over time (by name, then by address).
    const seen = new Set<string>();
    const natRules = async () => {
      const pid = (await a.docker(['inspect', '-f', '{{.State.Pid}}', 'client'])).stdout.trim();
      return (await run('nsenter', ['-t', pid, '-n', 'iptables', '-t', 'nat', '-S'])).stdout;
    };
    let last = '';
    const hosts = await until('both tasks answer through the VIP', async () => {
      const x = await a.docker(['exec', 'client', 'nc', '-w', '3', 'web', '80']);
      if (x.code === 0) seen.add(x.stdout.trim());
      last = x.stdout + x.stderr;
      return seen.size === 2 ? [...seen] : undefined;
    }).catch(async (err: Error) => {
      throw new Error(`${err.message}: seen ${[...seen]}, last ${last}, rules:\n${await natRules()}`);
    });
    assert.equal(hosts.length, 2);
    const counts = new Map<string, number>();
    for (let i = 0; i < 6; i++) {
      const x = await a.docker(['exec', 'client', 'nc', '-w', '3', vip, '80']);
      assert.equal(x.code, 0, x.stdout + x.stderr);
      counts.set(x.stdout.trim(), (counts.get(x.stdout.trim()) ?? 0) + 1);
    }
    t.diagnostic(`6 requests to the VIP: ${JSON.stringify(Object.fromEntries(counts))}`);
    assert.equal(counts.size, 2, 'nth balancing: each task takes its turn');

    // Tasks reach each other across nodes by container name, task name and alias.
    const onB = (await b.docker(['ps', '--format', '{{.Names}}', '--filter', 'label=com.docker.swarm.service.name=web'])).stdout.trim();
    const onA = (await a.docker(['ps', '--format', '{{.Names}}', '--filter', 'label=com.docker.swarm.service.name=web'])).stdout.trim();
    const taskNameA = onA.split('.').slice(0, 2).join('.');
    for (const target of [onA, taskNameA, 'www']) {
      const p = await until(`a task on the worker reaches ${target}`, async () => {
        const x = await b.docker(['exec', onB, 'ping', '-c', '1', '-W', '2', target]);
        return x.code === 0 ? x.stdout : undefined;
      });
      assert.match(p, /10\.0\.1\.\d+/);
    }
    // From the worker's task, the VIP balances too (its own namespace has the rules).
    const fromTask = await until('the VIP answers from a task on the worker', async () => {
      const x = await b.docker(['exec', onB, 'nc', '-w', '3', 'web', '80']);
      return x.code === 0 ? x.stdout.trim() : undefined;
    });
    assert.ok(hosts.includes(fromTask));

    // Scaled to 3: the VIP's rules follow (a third task answers through it).
    assert.equal((await a.docker(['service', 'scale', '--detach', 'web=3'])).code, 0);
    await until('tasks.web resolves to 3 tasks', async () => {
      const x = await a.docker(['exec', 'client', 'nslookup', 'tasks.web']);
      return x.code === 0 && lookup(x.stdout).length === 3 ? true : undefined;
    });
    const three = new Set<string>();
    await until('3 tasks answer through the VIP', async () => {
      const x = await a.docker(['exec', 'client', 'nc', '-w', '3', 'web', '80']);
      if (x.code === 0 && x.stdout.trim()) three.add(x.stdout.trim());
      return three.size === 3 ? true : undefined;
    });

    // dnsrr: no VIP, `<service>` is the tasks' addresses.
    const rr = await a.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'rr',
      '--replicas',
      '2',
      '--endpoint-mode',
      'dnsrr',
      '--network',
      'ovs',
      'busybox',
      'sleep',
      '600',
    ]);
    assert.equal(rr.code, 0, rr.stderr + a.output);
    const rrSvc = JSON.parse((await a.docker(['service', 'inspect', 'rr'])).stdout)[0];
    assert.equal(rrSvc.Endpoint.VirtualIPs, undefined);
    assert.equal(rrSvc.Endpoint.Spec.Mode, 'dnsrr');
    let rrLast = '';
    const rrAnswer = await until(
      'rr resolves to both tasks',
      async () => {
        const x = await a.docker(['exec', 'client', 'nslookup', 'rr']);
        rrLast = x.stdout + x.stderr;
        const got = x.code === 0 ? lookup(x.stdout) : [];
        return got.length === 2 ? got : undefined;
      },
      60_000,
    ).catch(async (err: Error) => {
      const ps = await a.docker(['service', 'ps', '--no-trunc', 'rr']);
      throw new Error(`${err.message}: ${rrLast}\n${ps.stdout}${ps.stderr}`);
    });
    assert.ok(!rrAnswer.includes(vip));

    // The routing mesh: a published port (mode ingress) answers on every node, from both tasks.
    const t1 = Date.now();
    const pub = await a.docker([
      'service',
      'create',
      '--detach',
      '--no-resolve-image',
      '--name',
      'pub',
      '--replicas',
      '2',
      '-p',
      '8080:80',
      'busybox',
      'sh',
      '-c',
      SERVE,
    ]);
    assert.equal(pub.code, 0, pub.stderr + a.output);
    const pubSvc = JSON.parse((await a.docker(['service', 'inspect', 'pub'])).stdout)[0];
    assert.equal(pubSvc.Endpoint.Ports[0].PublishMode, 'ingress');
    assert.equal(pubSvc.Endpoint.Ports[0].PublishedPort, 8080);
    assert.match(pubSvc.Endpoint.VirtualIPs[0].Addr, /^10\.0\.0\.\d+\/24$/, 'a VIP on the ingress network');
    for (const [from, to] of [
      [1, 0],
      [0, 1],
      [0, 0],
    ] as const) {
      const answered = new Set<string>();
      let lastErr = '';
      await until(`port 8080 of node ${to} answers from both tasks (asked from node ${from})`, async () => {
        const x = await run('ip', ['netns', 'exec', ns(from), 'busybox', 'nc', '-w', '3', addr(to), '8080']);
        if (x.code === 0 && x.stdout.trim()) answered.add(x.stdout.trim());
        lastErr = x.stderr;
        return answered.size === 2 ? true : undefined;
      }).catch(async (err: Error) => {
        throw new Error(`${err.message}: ${[...answered]} ${lastErr}\n${await inNs(to, 'iptables -t nat -S; ip -o addr')}`);
      });
    }
    t.diagnostic(`published port answering from both tasks on both nodes ${Date.now() - t1} ms after service create`);

    // Removal: the services' tasks go, the VIP is freed, then the network can go.
    assert.equal((await a.docker(['rm', '-f', 'client'])).code, 0);
    assert.equal((await a.docker(['service', 'rm', 'web', 'rr', 'pub'])).code, 0);
    await until('the network removable once the tasks and the VIP are gone', async () =>
      (await a.docker(['network', 'rm', 'ovs'])).code === 0 ? true : undefined,
    );
  });
});
