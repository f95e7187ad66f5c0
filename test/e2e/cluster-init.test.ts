// Cluster start-up and the daemon's cluster flags through the real docker CLI: `swarm init` without
// --advertise-addr on a daemon started with --cluster-default-advertise-addr (an IP) advertises that
// address (docker info, node inspect); a second daemon whose default is an interface name (`lo`)
// joins as a manager with the interface's address. --network-control-plane-mtu: the TCPMSS rule on
// the control ports, the MSS of a live control connection, gone after `swarm leave`. The founding
// etcd member starts on the short Raft timings and is on the steady ones once a manager joined.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';

// Addresses and ports of this test process (listen 0.0.0.0:PORT binds the port on every address).
const IP = `127.0.3.${10 + (process.pid % 200)}`;
const PORT = 12000 + (process.pid % 400) * 10;
const MTU = 1400;

/** The command line of the etcd whose data is under `dataRoot`. */
function etcdArgs(dataRoot: string): string[] | undefined {
  for (const e of readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const cmd = readFileSync(`/proc/${e}/cmdline`, 'utf8');
      if (cmd.includes(`\0--data-dir\0${dataRoot}/`)) return cmd.split('\0');
    } catch {
      // gone meanwhile
    }
  }
  return undefined;
}

const flag = (args: string[] | undefined, name: string) => (args ? args[args.indexOf(name) + 1] : undefined);
const mangle = () => execFileSync('iptables', ['-w', '-t', 'mangle', '-S', 'OUTPUT'], { encoding: 'utf8' });

describe('cluster start-up and flags', () => {
  let a: TestDaemon;
  let b: TestDaemon;
  before(async () => {
    [a, b] = await Promise.all([
      startDaemon({ args: ['--cluster-default-advertise-addr', IP, '--network-control-plane-mtu', String(MTU)] }),
      startDaemon({ args: ['--cluster-default-advertise-addr', 'lo'] }),
    ]);
  });
  after(async () => {
    await Promise.all([a?.cleanup(), b?.cleanup()]);
  });

  test('the default advertise address, the control-plane MTU and the founding member’s timings', async () => {
    const warnings = JSON.parse((await a.docker(['info', '--format', '{{json .Warnings}}'])).stdout) as string[] | null;
    assert.ok(!(warnings ?? []).some((w) => /advertise|control-plane|control plane/i.test(w)), JSON.stringify(warnings));

    const t0 = performance.now();
    const init = await a.docker(['swarm', 'init', '--listen-addr', `0.0.0.0:${PORT}`]);
    assert.equal(init.code, 0, init.stderr + a.output);
    const initMs = performance.now() - t0;
    assert.match(init.stdout, new RegExp(`docker swarm join --token \\S+ ${IP.replace(/\./g, '\\.')}:${PORT}`));
    const swarm = JSON.parse((await a.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(swarm.NodeAddr, IP);
    assert.deepEqual(swarm.RemoteManagers, [{ NodeID: swarm.NodeID, Addr: `${IP}:${PORT}` }]);
    const self = JSON.parse((await a.docker(['node', 'inspect', 'self'])).stdout)[0];
    assert.equal(self.Status.Addr, IP);
    assert.equal(self.ManagerStatus.Addr, `${IP}:${PORT}`);
    // The founding member, alone, runs on the short Raft timings (it elected itself at once).
    const founding = etcdArgs(a.dataRoot);
    assert.equal(flag(founding, '--heartbeat-interval'), '10', founding?.join(' '));
    assert.equal(flag(founding, '--listen-client-urls'), `https://${IP}:${PORT + 2}`);
    console.log(`swarm init (CLI, loaded machine): ${initMs.toFixed(0)} ms`);

    // --network-control-plane-mtu: SYNs on the control ports get MSS = MTU − 40 …
    const rule = mangle()
      .split('\n')
      .find((l) => l.includes(`engine-cluster-mtu:${swarm.NodeID}`));
    assert.ok(rule, mangle());
    assert.match(rule, new RegExp(`--ports ${PORT},${PORT + 2},${PORT + 3} `));
    assert.match(rule, new RegExp(`--set-mss ${MTU - 40}`));
    // … which the daemon's own connections to its etcd carry (both ends' SYNs are clamped; loopback
    // alone would give 65483, and TCP timestamps take 12 bytes of it).
    const ss = execFileSync('ss', ['-tniH', 'state', 'established', `( dport = :${PORT + 2} )`], { encoding: 'utf8' });
    const mss = [...ss.matchAll(/\bmss:(\d+)/g)].map((m) => Number(m[1]));
    assert.ok(mss.length > 0 && mss.every((v) => v <= MTU - 40 && v >= MTU - 40 - 40), ss);

    // A manager joins without an advertise address: the manager takes the address it connects from
    // (127.0.0.1, the loopback route's source), as swarmkit; dockerd ignores the default on join.
    const token = (await a.docker(['swarm', 'join-token', '-q', 'manager'])).stdout.trim();
    const join = await b.docker(['swarm', 'join', '--token', token, '--listen-addr', `0.0.0.0:${PORT + 5}`, `${IP}:${PORT}`]);
    assert.equal(join.code, 0, join.stderr + b.output);
    const bSwarm = JSON.parse((await b.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(bSwarm.NodeAddr, '127.0.0.1');
    const bNode = JSON.parse((await a.docker(['node', 'inspect', bSwarm.NodeID])).stdout)[0];
    assert.equal(bNode.ManagerStatus.Addr, `127.0.0.1:${PORT + 5}`);
    // The founding member left the short timings before the cluster grew, and both serve.
    assert.equal(flag(etcdArgs(a.dataRoot), '--heartbeat-interval'), '250');
    assert.equal(flag(etcdArgs(b.dataRoot), '--heartbeat-interval'), '250');
    await until(
      'both managers Ready and reachable',
      async () => {
        const r = await b.docker(['node', 'ls', '--format', '{{.Status}} {{.ManagerStatus}}']);
        const lines = r.stdout.trim().split('\n').sort();
        return r.code === 0 && lines.join(',') === 'Ready Leader,Ready Reachable' ? true : undefined;
      },
      60_000,
      250,
    );

    // Leaving removes the rule.
    assert.equal((await b.docker(['swarm', 'leave', '--force'])).code, 0);
    assert.equal((await a.docker(['swarm', 'leave', '--force'])).code, 0);
    assert.ok(!mangle().includes(`engine-cluster-mtu:${swarm.NodeID}`), mangle());
  });
});

test('an interface that does not exist is refused as the default advertise address at init', async () => {
  const d = await startDaemon({ args: ['--cluster-default-advertise-addr', 'nosuchif0'] });
  try {
    const r = await d.docker(['swarm', 'init', '--listen-addr', `0.0.0.0:${PORT + 1}`]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /invalid default advertise address: no such interface "nosuchif0"/);
    assert.equal((await d.request('GET', '/_ping')).headers['swarm'], 'inactive');
  } finally {
    await d.cleanup();
  }
});
