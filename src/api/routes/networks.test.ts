// Network routes on a recording fake backend: statuses per operation and body checks.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { registerNetworkRoutes, type NetworksBackend } from './networks.ts';

describe('network routes', () => {
  const { backend, calls } = fakeBackend<NetworksBackend>({
    list: [{ Name: 'bridge' }],
    inspect: { Name: 'n1' },
    create: { Id: 'abc', Warning: '' },
    remove: undefined,
    connect: undefined,
    disconnect: undefined,
    prune: { NetworksDeleted: null },
  });
  const h = new RouteHarness((r) => registerNetworkRoutes(r, backend));
  after(() => h.close());

  test('list, inspect with scope, create 201, remove 204, prune', async () => {
    assert.deepEqual((await h.request('GET', '/networks')).json, [{ Name: 'bridge' }]);
    assert.equal((await h.request('GET', '/networks/n1?scope=local')).status, 200);
    assert.deepEqual(calls.at(-1), { method: 'inspect', args: ['n1', { scope: 'local' }] });
    const c = await h.request('POST', '/networks/create', { body: { Name: 'n1' } });
    assert.equal(c.status, 201);
    assert.deepEqual(c.json, { Id: 'abc', Warning: '' });
    assert.equal((await h.request('DELETE', '/networks/n1')).status, 204);
    assert.deepEqual((await h.request('POST', '/networks/prune')).json, { NetworksDeleted: null });
  });

  test('connect and disconnect answer 200; a non-string Container is a 400', async () => {
    const r = await h.request('POST', '/networks/n1/connect', { body: { Container: 'c1', EndpointConfig: { Aliases: ['a'] } } });
    assert.equal(r.status, 200);
    assert.deepEqual(calls.at(-1), { method: 'connect', args: ['n1', { Container: 'c1', EndpointConfig: { Aliases: ['a'] } }] });
    const d = await h.request('POST', '/networks/n1/disconnect', { body: { Container: 'c1', Force: true } });
    assert.equal(d.status, 200);
    assert.deepEqual(calls.at(-1)?.args, ['n1', { Container: 'c1', Force: true }]);
    const bad = await h.request('POST', '/networks/n1/connect', { body: { Container: 7 } });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /Go struct field ConnectOptions\.Container of type string/);
    assert.equal((await h.request('POST', '/networks/create', { raw: '[1]' })).status, 400);
  });

  test("1.28: the list is detailed (each network's Containers) before, summary from", async () => {
    const v = fakeBackend<NetworksBackend>({
      list: [{ Name: 'app', Id: 'n1', Containers: {} }],
      inspect: (id: string) => ({ Id: id, Containers: { c1: { Name: 'web' } } }),
    });
    const vh = new RouteHarness((r) => registerNetworkRoutes(r, v.backend));
    try {
      assert.deepEqual((await vh.request('GET', '/v1.27/networks')).json[0].Containers, { c1: { Name: 'web' } });
      assert.deepEqual((await vh.request('GET', '/v1.28/networks')).json[0].Containers, {});
      assert.equal(v.calls.filter((c) => c.method === 'inspect').length, 1, 'inspected for the old client only');
    } finally {
      await vh.close();
    }
  });

  test('1.48: EnableIPv4 is ignored before, passed on from', async () => {
    await h.request('POST', '/v1.47/networks/create', { body: { Name: 'n4', EnableIPv4: false } });
    assert.deepEqual(calls.at(-1)?.args[0], { Name: 'n4' });
    await h.request('POST', '/v1.48/networks/create', { body: { name: 'n4', enableipv4: false } });
    assert.deepEqual(calls.at(-1)?.args[0], { Name: 'n4', EnableIPv4: false });
  });
});
