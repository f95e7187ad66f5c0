// Plugin routes on fake backends and on the engine's "no managed plugins" backend, which must
// answer as a dockerd without plugins (an empty list, 404 for a name) and 501 for what it cannot do.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { NoManagedPlugins } from '../../plugins/managed.ts';
import { registerPluginRoutes, type PluginsBackend } from './plugins.ts';

describe('plugin routes: no managed plugins', () => {
  const h = new RouteHarness((r) => registerPluginRoutes(r, new NoManagedPlugins()));
  after(() => h.close());

  test('the list is empty, a named plugin is not found, installing is 501', async () => {
    const list = await h.request('GET', '/v1.51/plugins');
    assert.equal(list.status, 200);
    assert.deepEqual(list.json, []);
    const one = await h.request('GET', '/plugins/vieux/sshfs:latest/json');
    assert.equal(one.status, 404);
    assert.equal(one.json.message, 'plugin "vieux/sshfs:latest" not found');
    assert.equal((await h.request('DELETE', '/plugins/x')).status, 404);
    assert.equal((await h.request('POST', '/plugins/x/enable')).status, 404);
    const pull = await h.request('POST', '/plugins/pull?remote=vieux/sshfs', { body: [] });
    assert.equal(pull.status, 501);
    assert.match(pull.json.message, /managed plugins are not supported/);
  });
});

describe('plugin routes: what reaches the backend', () => {
  const view = { Id: 'p1', Name: 'x:latest', Enabled: true, Settings: { Mounts: [], Env: [], Args: [], Devices: [] }, PluginReference: 'x:latest', Config: {} };
  const { backend, calls } = fakeBackend<PluginsBackend>({ configure: undefined, remove: view, inspect: view });
  const h = new RouteHarness((r) => registerPluginRoutes(r, backend));
  after(() => h.close());

  test('set takes a list of strings; delete answers the removed plugin', async () => {
    assert.equal((await h.request('POST', '/plugins/x/set', { body: ['DEBUG=1'] })).status, 204);
    assert.deepEqual(calls.at(-1), { method: 'configure', args: ['x', ['DEBUG=1']] });
    assert.equal((await h.request('POST', '/plugins/x/set', { body: { DEBUG: 1 } })).status, 400);
    const del = await h.request('DELETE', '/plugins/x?force=1');
    assert.equal(del.status, 200);
    assert.equal(del.json.Id, 'p1');
    assert.deepEqual(calls.at(-1), { method: 'remove', args: ['x', { force: true }] });
  });
});
