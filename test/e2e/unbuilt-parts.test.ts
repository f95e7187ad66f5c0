// A node outside any cluster answers through the real docker CLI as a dockerd outside a swarm does,
// so clients' clean-up code (`docker swarm leave --force`) works (cluster mode itself:
// cluster.test.ts). And a fresh daemon has no managed plugins (those are built:
// managed-plugins.test.ts), so `docker plugin ls` in clean-up code finds nothing.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';

describe("a node outside any cluster, and a fresh daemon's plugins, through the docker CLI", () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
  });
  after(async () => d?.cleanup());

  test('swarm leave, node ls and service ls fail as on a dockerd outside a swarm', async () => {
    const leave = await d.docker(['swarm', 'leave', '--force']);
    assert.equal(leave.code, 1);
    assert.match(leave.stderr, /Error response from daemon: This node is not part of a swarm/);
    const nodes = await d.docker(['node', 'ls']);
    assert.equal(nodes.code, 1);
    assert.match(nodes.stderr, /This node is not a swarm manager\. Use "docker swarm init" or "docker swarm join"/);
    const services = await d.docker(['service', 'ls']);
    assert.match(services.stderr, /This node is not a swarm manager/);
    const unlock = await d.request('POST', '/v1.51/swarm/unlock', { body: { UnlockKey: 'x' } });
    assert.equal(unlock.status, 503);
    const ping = await d.request('GET', '/_ping');
    assert.equal(ping.headers['swarm'], 'inactive');
    const info = await d.docker(['info', '--format', '{{.Swarm.LocalNodeState}}']);
    assert.equal(info.stdout.trim(), 'inactive');
  });

  test('plugin ls is empty, inspect of a name is not found, a pull without a remote is a 400', async () => {
    const ls = await d.docker(['plugin', 'ls', '--format', '{{.Name}}']);
    assert.equal(ls.code, 0, ls.stderr);
    assert.equal(ls.stdout.trim(), '');
    const insp = await d.docker(['plugin', 'inspect', 'nosuch']);
    assert.equal(insp.code, 1);
    assert.match(insp.stderr, /not found/);
    const raw = await d.request('POST', '/v1.51/plugins/pull', { body: [] });
    assert.equal(raw.status, 400);
    assert.match(raw.json().message, /remote is required/);
  });
});
