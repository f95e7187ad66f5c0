// `swarm init` without --advertise-addr, as dockerd resolves the address: in a namespace without a
// device link (veths only, as a daemon in a container) every up link counts except the daemon's
// own networks (its bridge): two addressed veths are refused with dockerd's message, one is taken;
// a node joining without one is taken at the address it connects from.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { sh } from '../helpers/outside-host.ts';

const ns = `adv-${process.pid}`;
const A = `10.${70 + (process.pid % 20)}.0.2`;
const B = `10.${90 + (process.pid % 20)}.0.2`;

describe('swarm init: the advertise address detected', () => {
  let d: TestDaemon | undefined;
  before(async () => {
    await sh('ip', ['netns', 'add', ns]);
    const up = `ip link set lo up && ip link add va type veth peer name vb && ip addr add ${A}/24 dev va && ip addr add ${B}/24 dev vb && ip link set va up && ip link set vb up`;
    await sh('ip', ['netns', 'exec', ns, 'sh', '-c', up]);
    d = await startDaemon({ netns: ns });
  });
  after(async () => {
    await d?.cleanup();
    await run('ip', ['netns', 'del', ns]);
  });

  test("several links with addresses: refused (400, dockerd's words); one: its address, the daemon's bridge aside", async () => {
    const refused = await d!.request('POST', '/v1.51/swarm/init', { body: { ListenAddr: '0.0.0.0:2377' } });
    assert.equal(refused.status, 400, refused.text());
    const pair = [`${A} on va and ${B} on vb`, `${B} on vb and ${A} on va`].map(
      (p) => `could not choose an IP address to advertise since this system has multiple addresses on different interfaces (${p})`,
    );
    assert.ok(pair.includes(refused.json().message), refused.text());
    assert.equal((await d!.request('GET', '/_ping')).headers['swarm'], 'inactive');

    await sh('ip', ['netns', 'exec', ns, 'ip', 'addr', 'flush', 'dev', 'vb']);
    const init = await d!.docker(['swarm', 'init']);
    assert.equal(init.code, 0, init.stderr);
    assert.match(init.stdout, new RegExp(`docker swarm join --token \\S+ ${A.replace(/\./g, '\\.')}:2377`));
    const swarm = JSON.parse((await d!.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
    assert.equal(swarm.NodeAddr, A);

    // A node joining without --advertise-addr is taken at the address it connects from (the
    // daemon's default advertise address is not used on join, as dockerd).
    const w = await startDaemon({ netns: ns, args: ['--cluster-default-advertise-addr', '127.0.0.1'] });
    try {
      const token = (await d!.docker(['swarm', 'join-token', '-q', 'worker'])).stdout.trim();
      const join = await w.docker(['swarm', 'join', '--token', token, '--listen-addr', '0.0.0.0:2477', `${A}:2377`]);
      assert.equal(join.code, 0, join.stderr);
      const wSwarm = JSON.parse((await w.docker(['info', '--format', '{{json .Swarm}}'])).stdout);
      assert.equal(wSwarm.NodeAddr, A);
      const wNode = JSON.parse((await d!.docker(['node', 'inspect', wSwarm.NodeID])).stdout)[0];
      assert.equal(wNode.Status.Addr, A);
      assert.equal((await w.docker(['swarm', 'leave', '--force'])).code, 0);
    } finally {
      await w.cleanup();
    }
    assert.equal((await d!.docker(['swarm', 'leave', '--force'])).code, 0);
  });
});
