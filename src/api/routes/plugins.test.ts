// Plugin routes on a recording fake backend: what reaches the backend, and bad input as 400s.
// (The real backend, daemon/plugins/service.ts, is tested end to end in test/e2e/managed-plugins.)
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { PluginView } from '../../types/plugins.ts';
import { registerPluginRoutes, type PluginsBackend } from './plugins.ts';

describe('plugin routes: what reaches the backend', () => {
  const view = {
    Id: 'p1',
    Name: 'x:latest',
    Enabled: true,
    Settings: { Mounts: [], Env: [], Args: [], Devices: [] },
    PluginReference: 'x:latest',
    Config: {} as PluginView['Config'],
  };
  const { backend, calls } = fakeBackend<PluginsBackend>({
    configure: undefined,
    remove: view,
    inspect: view,
    install: async (_remote, opts, sink) => {
      opts.onName?.('x:latest');
      sink({ status: 'Digest: sha256:00' });
      return 'x:latest';
    },
  });
  const h = new RouteHarness((r) => registerPluginRoutes(r, backend));
  after(() => h.close());

  test('pull: privileges from the body, the name in Docker-Plugin-Name, progress as JSON lines', async () => {
    const r = await h.request('POST', '/plugins/pull?remote=localhost:5000/x:1&name=x', {
      body: [{ Name: 'network', Value: ['host'] }],
      headers: { 'X-Registry-Auth': 'e30=' },
    });
    assert.equal(r.status, 200);
    assert.equal(r.headers['docker-plugin-name'], 'x:latest');
    assert.equal(r.text.trim(), '{"status":"Digest: sha256:00"}');
    const call = calls.at(-1)!;
    assert.equal(call.method, 'install');
    assert.equal(call.args[0], 'localhost:5000/x:1');
    assert.deepEqual((call.args[1] as { privileges: unknown }).privileges, [{ Name: 'network', Value: ['host'] }]);
    assert.equal((call.args[1] as { registryAuth?: string }).registryAuth, 'e30=');
    assert.equal((call.args[1] as { name?: string }).name, 'x');
  });

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
