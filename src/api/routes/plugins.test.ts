// Plugin routes on a recording fake backend: what reaches the backend, and bad input as 400s.
// (The real backend, daemon/plugins/service.ts, is tested end to end in test/e2e/managed-plugins.)
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { PluginView } from '../../types/plugins.ts';
import { registerPluginRoutes, type PluginsBackend } from './plugins.ts';

describe('plugin routes: what reaches the backend', () => {
  const view = { Id: 'p1', Name: 'x:latest', Enabled: true, Settings: { Mounts: [], Env: [], Args: [], Devices: [] }, PluginReference: 'x:latest', Config: {} as PluginView['Config'] };
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
