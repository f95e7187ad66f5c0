// A host is left as it was found, under the FORWARD policy of a fresh host (DROP). A daemon inits a
// one-node cluster, runs a two-task service on an overlay network with a port published through the
// routing mesh: the tasks reach each other by task address and by the service's VIP, and the host
// reaches the published port. Leaving the cluster removes its networks' devices (bridges, vxlan
// links) and their firewall rules and the task containers; a clean stop (SIGTERM) then leaves no
// link, iptables chain or rule, mount, shim, containerd or etcd of that daemon.
// A daemon stopped while still in its cluster leaves nothing either (its tasks stop after its
// agent, so none is started again while they stop), and its next start comes back into the cluster
// with the service's tasks talking again.
// Last, a host whose other firewall was there first (its own chain jumped to from the top of
// FORWARD, dropping everything, and policy DROP), in a namespace of its own: the daemon's
// containers still talk, and a stop leaves that firewall as it was.
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { connect } from 'node:net';
import { join } from 'node:path';
import { after, describe, test } from 'node:test';
import { chainPrefix, daemonTag } from '../../src/network/naming.ts';
import { findShims } from '../../src/supervisor/shims.ts';
import { findEtcd } from '../helpers/cluster-nodes.ts';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { forwardPolicy } from '../helpers/forward-policy.ts';
import { sh } from '../helpers/outside-host.ts';
import { loadBusybox } from '../helpers/images.ts';
import { daemonChainPrefix, daemonLinks } from '../helpers/network-teardown.ts';
import { until } from '../helpers/until.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.9 (the other cluster files use .1 to .8).
const base = 10 + loopbackSlot() * 4;
const ip = (i: number) => `127.0.${base + i}.9`;
// A published port of its own per test process (another cluster on this host could pick a dynamic one).
const PUBLISHED = 40_000 + (process.pid % 5_000);
const SERVE = "trap 'exit 0' TERM; while true; do hostname | nc -l -p 8080 & wait $!; done";

interface TaskView {
  DesiredState: string;
  Status: { State: string; Err?: string; ContainerStatus?: { ContainerID?: string } };
}

/** The daemon's rules as iptables-save (IPv4 and IPv6) prints them: every line naming its chains. */
async function ownRules(execRoot: string, netns?: string): Promise<string[]> {
  const prefix = chainPrefix(daemonTag(execRoot));
  const out: string[] = [];
  for (const tool of ['iptables-save', 'ip6tables-save']) {
    const r = netns ? await run('ip', ['netns', 'exec', netns, tool]) : await run(tool, []);
    out.push(
      ...r.stdout.split('\n').filter((l) => l.includes(`${prefix}-`) || l.split(/\s/).includes(prefix) || l.includes(`:${prefix} `)),
    );
  }
  return out;
}

/** Mounts below a directory (netns files, rootfs, secrets' tmpfs). */
async function mountsUnder(dir: string): Promise<string[]> {
  return (await readFile('/proc/mounts', 'utf8'))
    .split('\n')
    .map((l) => l.split(' ')[1] ?? '')
    .filter((m) => m === dir || m.startsWith(dir + '/'));
}

/** Pids of processes whose command line names the directory (containerd, etcd, shims, proxies). */
async function processesUnder(dir: string): Promise<string[]> {
  const { readdir } = await import('node:fs/promises');
  const out: string[] = [];
  for (const e of await readdir('/proc')) {
    if (!/^\d+$/.test(e) || Number(e) === process.pid) continue;
    const cmd = await readFile(`/proc/${e}/cmdline`, 'utf8').catch(() => '');
    if (cmd.includes(dir)) out.push(`${e}: ${cmd.replace(/\0/g, ' ').slice(0, 160)}`);
  }
  return out;
}

function hostConnect(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port });
    let data = '';
    s.setTimeout(3000, () => s.destroy(new Error('timed out')));
    s.on('data', (d) => (data += d));
    s.on('end', () => resolve(data));
    s.on('error', reject);
  });
}

/** `docker service create` of `web`: two tasks on `back` answering their hostname on 8080, published. */
async function createService(d: TestDaemon): Promise<void> {
  const init = await d.docker(['swarm', 'init', '--advertise-addr', ip(0), '--listen-addr', `${ip(0)}:2377`]);
  assert.equal(init.code, 0, init.stderr);
  assert.equal((await d.docker(['network', 'create', '-d', 'overlay', 'back'])).code, 0);
  const svc = await d.docker([
    'service',
    'create',
    '--detach',
    '--name',
    'web',
    '--network',
    'back',
    '--replicas',
    '2',
    '--stop-grace-period',
    '1s',
    // Replaced at once when they stop: a daemon whose agent outlives its containers' stop would
    // start new ones while it shuts down.
    '--restart-delay',
    '0s',
    '--publish',
    `published=${PUBLISHED},target=8080`,
    'busybox',
    'sh',
    '-c',
    SERVE,
  ]);
  assert.equal(svc.code, 0, svc.stderr);
}

/**
 * Waits for two running tasks, then checks under DROP that one reaches the other by address and
 * the service by its VIP, and that the host reaches the published port. Answers the containers.
 */
async function serviceTalks(d: TestDaemon): Promise<[string, string]> {
  const tasks = await until(
    'two running tasks',
    async () => {
      const r = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['web'] }))}`);
      const ts = (r.json() as TaskView[]).filter((t) => t.DesiredState === 'running');
      return ts.length === 2 && ts.every((t) => t.Status.State === 'running') ? ts : undefined;
    },
    90_000,
    300,
  );
  let [a, b] = tasks.map((t) => t.Status.ContainerStatus!.ContainerID!) as [string, string];
  let bHost = '';
  // Right after a restart the tasks may still name the containers the start-up stops (they read as
  // running until then) before their replacements: the pair is read again until both answer.
  const direct = await until(
    'one task reaches the other by address',
    async () => {
      const bIp = (await d.docker(['inspect', '-f', '{{(index .NetworkSettings.Networks "back").IPAddress}}', b])).stdout.trim();
      bHost = (await d.docker(['inspect', '-f', '{{.Config.Hostname}}', b])).stdout.trim();
      const r = bIp ? await d.docker(['exec', a, 'sh', '-c', `nc -w 2 ${bIp} 8080 </dev/null`]) : undefined;
      if (r && r.code === 0 && r.stdout.trim()) return r.stdout.trim();
      const now = await d.request('GET', `/v1.51/tasks?filters=${encodeURIComponent(JSON.stringify({ service: ['web'] }))}`);
      const live = (now.json() as TaskView[]).filter((t) => t.DesiredState === 'running' && t.Status.State === 'running');
      if (live.length === 2) [a, b] = live.map((t) => t.Status.ContainerStatus!.ContainerID!) as [string, string];
      return undefined;
    },
    30_000,
    500,
  );
  assert.equal(direct, bHost);
  await until(
    'the VIP answers',
    async () => {
      const r = await d.docker(['exec', a, 'sh', '-c', 'nc -w 2 web 8080 </dev/null']);
      return r.code === 0 && r.stdout.trim() ? true : undefined;
    },
    30_000,
    500,
  );
  // The routing mesh: the host reaches the published port (forwarded into the ingress bridge).
  await until('the published port answers', async () => ((await hostConnect(PUBLISHED)).trim() ? true : undefined), 30_000, 500);
  return [a, b];
}

/** The daemon has stopped: nothing of it remains on the host. */
async function nothingLeft(d: TestDaemon): Promise<void> {
  assert.deepEqual(daemonLinks(d.execRoot), [], 'no link of the daemon');
  assert.deepEqual(await ownRules(d.execRoot), [], 'no chain or rule of the daemon');
  assert.deepEqual(await findShims(join(d.execRoot, 'containerd', 'containerd.sock')), [], 'no shim');
  assert.deepEqual(await mountsUnder(d.dir), [], 'no mount');
  assert.deepEqual(await processesUnder(d.dir), [], 'no process of the daemon');
}

describe('a host is left as it was found', { timeout: 300_000 }, () => {
  const ds: TestDaemon[] = [];
  const daemon = async (args: string[] = []) => {
    const d = await startDaemon({ args });
    ds.push(d);
    await loadBusybox(d);
    return d;
  };
  after(async () => {
    await Promise.all(ds.map((d) => d.cleanup()));
  });

  test('swarm init, service on an overlay network under DROP, leave, stop: nothing of the daemon remains', async () => {
    const d = await daemon();
    assert.equal(await forwardPolicy(), 'DROP', 'the host runs as a fresh host does');
    await createService(d);
    await serviceTalks(d);
    const running = daemonLinks(d.execRoot);
    assert.ok(
      running.some((l) => l.startsWith('ov-')) && running.some((l) => l.startsWith('vx-')),
      `overlay devices while the service runs: ${running}`,
    );
    const rulesRunning = await ownRules(d.execRoot);
    const ovs = running.filter((l) => l.startsWith('ov-'));
    assert.ok(
      ovs.every((o) => rulesRunning.some((r) => r.includes(o))),
      `rules for each overlay bridge:\n${rulesRunning.join('\n')}`,
    );
    assert.ok(
      rulesRunning.some((r) => r.includes(`--dport ${PUBLISHED}`)),
      'the mesh DNAT is in the daemon chains',
    );

    const leave = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(leave.code, 0, leave.stderr);
    // Leaving removes the cluster's devices and their rules, and the tasks' containers.
    await until(
      'no overlay device after leave',
      () => (daemonLinks(d.execRoot).some((l) => /^(ov|vx)-/.test(l)) ? undefined : true),
      30_000,
      200,
    ).catch((err: Error) => assert.fail(`${err.message}: ${daemonLinks(d.execRoot)}`));
    const rulesLeft = (await ownRules(d.execRoot)).filter((r) => /ov-|vx-|SNAT|statistic|--dport/.test(r));
    assert.deepEqual(rulesLeft, [], 'no overlay or mesh rule after leave');
    assert.equal((await d.docker(['ps', '-aq'])).stdout.trim(), '', 'the tasks are gone');
    assert.equal(findEtcd(d.dataRoot), undefined, 'no etcd after leave');

    assert.equal(await d.stop(), 0, d.output.slice(-3000));
    await nothingLeft(d);
  });

  test('stopped in its cluster: nothing remains; the next start comes back and the service talks again', async () => {
    const d = await daemon(['--debug']);
    await createService(d);
    const before = await serviceTalks(d);
    assert.equal(await d.stop(), 0, d.output.slice(-3000));
    // No task container was made once the stop began (the agent stopped first; before, it replaced
    // the tasks the shutdown had just stopped, and their shims could outlive the daemon).
    const afterSignal = d.output.slice(d.output.indexOf('Processing signal'));
    assert.doesNotMatch(afterSignal, /container created/, afterSignal.slice(0, 3000));
    await nothingLeft(d);

    await d.restart();
    // The node is back in its cluster; its tasks run again (restarted or replaced) and talk.
    const again = await serviceTalks(d);
    assert.equal(again.length, before.length);
    assert.equal(await d.stop(), 0, d.output.slice(-3000));
    await nothingLeft(d);
  });

  test("another firewall's FORWARD rules and policy were there first: containers still talk, and they are left as found", async () => {
    const ns = `hc-${(process.pid % 100000).toString(36)}`;
    const inNs = (cmd: string) => sh('ip', ['netns', 'exec', ns, 'sh', '-c', cmd]);
    await sh('ip', ['netns', 'add', ns]);
    try {
      // The other firewall: forwarding on, policy DROP, and a chain dropping everything forwarded
      // jumped to from the top of FORWARD.
      await inNs(
        'ip link set lo up && echo 1 > /proc/sys/net/ipv4/ip_forward && iptables -w -P FORWARD DROP && ' +
          'iptables -w -N OTHERFW && iptables -w -A OTHERFW -j DROP && iptables -w -I FORWARD 1 -j OTHERFW',
      );
      const d = await startDaemon({ netns: ns });
      ds.push(d);
      await loadBusybox(d);
      const talks = async (net: string) => {
        assert.equal((await d.docker(['network', 'create', net])).code, 0);
        const srv = await d.docker(['run', '-d', '--name', `srv-${net}`, '--network', net, 'busybox', 'sh', '-c', SERVE]);
        assert.equal(srv.code, 0, srv.stderr);
        const host = (await d.docker(['inspect', '-f', '{{.Config.Hostname}}', `srv-${net}`])).stdout.trim();
        const got = await until(
          `a container on ${net} reaches srv-${net}`,
          async () => {
            const r = await d.docker(['run', '--rm', '--network', net, 'busybox', 'sh', '-c', `nc -w 2 srv-${net} 8080 </dev/null`]);
            return r.code === 0 && r.stdout.trim() ? r.stdout.trim() : undefined;
          },
          30_000,
          500,
        );
        assert.equal(got, host);
      };
      await talks('first');
      // The other firewall puts its jump on top again while the daemon runs; the next network
      // puts the daemon's back above it.
      await inNs('iptables -w -I FORWARD 1 -j OTHERFW');
      await talks('second');
      const forward = (await inNs('iptables -w -S FORWARD')).split('\n');
      assert.match(forward[1] ?? '', new RegExp(`^-A FORWARD -j ${daemonChainPrefix(d.execRoot)}-FWD$`), forward.join('\n'));

      assert.equal(await d.stop(), 0, d.output.slice(-3000));
      assert.deepEqual(
        (await inNs('iptables -w -S FORWARD; iptables -w -S OTHERFW')).trim().split('\n'),
        ['-P FORWARD DROP', '-A FORWARD -j OTHERFW', '-A FORWARD -j OTHERFW', '-N OTHERFW', '-A OTHERFW -j DROP'],
        "the other firewall's rules and policy as they were",
      );
      assert.deepEqual(await ownRules(d.execRoot, ns), [], 'no chain or rule of the daemon');
    } finally {
      for (const d of ds.splice(0)) await d.cleanup();
      await run('ip', ['netns', 'del', ns]);
    }
  });
});
