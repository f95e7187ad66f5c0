// Cluster routes on fake backends: request parsing, status codes per family, and the answers of a
// node outside a cluster (dockerd's 503 messages), which clients' clean-up code depends on.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NOT_A_MANAGER, NOT_IN_A_CLUSTER } from '../../cluster/inactive.ts';
import { ClusterService } from '../../cluster/service.ts';
import { Logger } from '../../util/log.ts';
import { registerClusterRoutes, type ClusterBackend } from './cluster.ts';

describe('cluster routes: a node outside a cluster', () => {
  const dataRoot = mkdtempSync(join(tmpdir(), 'engine-cluster-routes-'));
  const service = new ClusterService({
    dataRoot,
    log: new Logger({ level: 'error', format: 'text', raw: false }),
    engineVersion: 'test',
    engineLabels: () => [],
  });
  const h = new RouteHarness((r) => registerClusterRoutes(r, service));
  after(() => {
    h.close();
    rmSync(dataRoot, { recursive: true, force: true });
  });

  test('leave is 503 "not part of a swarm"; inspect, lists and updates are 503 "not a swarm manager"', async () => {
    const leave = await h.request('POST', '/v1.41/swarm/leave?force=1');
    assert.equal(leave.status, 503);
    assert.equal(leave.json.message, NOT_IN_A_CLUSTER);
    for (const [method, path] of [
      ['GET', '/swarm'],
      ['GET', '/nodes'],
      ['GET', '/services?status=1'],
      ['GET', '/tasks'],
      ['GET', '/secrets/x'],
      ['GET', '/configs'],
      ['GET', '/swarm/unlockkey'],
      ['DELETE', '/services/web'],
      ['GET', '/services/web/logs?stdout=1'],
    ] as const) {
      const r = await h.request(method, path);
      assert.equal(r.status, 503, `${method} ${path}`);
      assert.equal(r.json.message, NOT_A_MANAGER, `${method} ${path}`);
      assert.match(String(r.headers['content-type']), /application\/json/);
    }
    const upd = await h.request('POST', '/swarm/update?version=3', { body: {} });
    assert.equal(upd.status, 503);
  });

  test('init and join refuse bad addresses, pools and tokens with a 400 before anything starts', async () => {
    const adv = await h.request('POST', '/swarm/init', { body: { ListenAddr: '0.0.0.0:2377', AdvertiseAddr: '0.0.0.0' } });
    assert.equal(adv.status, 400);
    assert.match(adv.json.message, /advertise address must be a non-zero IP address/);
    const port = await h.request('POST', '/swarm/init', { body: { ListenAddr: '127.0.0.1:99999' } });
    assert.equal(port.status, 400);
    const pool = await h.request('POST', '/swarm/init', { body: { AdvertiseAddr: '127.0.0.1', DefaultAddrPool: ['10.0.0.0'] } });
    assert.equal(pool.status, 400);
    assert.match(pool.json.message, /invalid default address pool/);
    const noRemote = await h.request('POST', '/swarm/join', { body: { JoinToken: 't' } });
    assert.equal(noRemote.status, 400);
    assert.match(noRemote.json.message, /at least 1 RemoteAddr is required/);
    // Still outside any cluster after all of these.
    assert.equal((await h.request('GET', '/swarm')).status, 503);
  });

  test('bad bodies and versions are 400 before the backend is asked', async () => {
    assert.equal((await h.request('POST', '/swarm/init', { raw: '{"ListenAddr": 7}' })).status, 400);
    assert.equal((await h.request('POST', '/swarm/init', { raw: '{not json' })).status, 400);
    assert.equal((await h.request('POST', '/swarm/join', { body: { RemoteAddrs: 'a' } })).status, 400);
    const v = await h.request('POST', '/services/x/update?version=abc', { body: {} });
    assert.equal(v.status, 400);
    assert.match(v.json.message, /invalid version/);
  });
});

describe('cluster routes: what reaches a cluster backend', () => {
  const { backend, calls } = fakeBackend<ClusterBackend>({
    init: 'node-1',
    create: (kind) => ({ ID: `${kind}-1`, ...(kind === 'services' ? { Warnings: ['w'] } : {}) }),
    update: { Warnings: [] },
    remove: undefined,
    list: [{ ID: 'n1' }],
  });
  const h = new RouteHarness((r) => registerClusterRoutes(r, backend));
  after(() => h.close());

  test("init returns the node ID; create answers 201 with the family's shape", async () => {
    const init = await h.request('POST', '/swarm/init', {
      body: { ListenAddr: '0.0.0.0:2377', DataPathPort: 4789, ForceNewCluster: false },
    });
    assert.equal(init.status, 200);
    assert.equal(init.json, 'node-1');
    assert.deepEqual(calls.at(-1), { method: 'init', args: [{ ListenAddr: '0.0.0.0:2377', DataPathPort: 4789 }] });
    const svc = await h.request('POST', '/services/create', { body: { Name: 'web' }, headers: { 'X-Registry-Auth': 'abc' } });
    assert.equal(svc.status, 201);
    assert.deepEqual(svc.json, { ID: 'services-1', Warnings: ['w'] });
    assert.deepEqual(calls.at(-1)?.args, ['services', { Name: 'web' }, { registryAuth: 'abc' }]);
    const sec = await h.request('POST', '/secrets/create', { body: { Name: 's', Data: 'eA==' } });
    assert.deepEqual(sec.json, { ID: 'secrets-1' });
  });

  test('updates carry version and rollback; list passes filters', async () => {
    const r = await h.request('POST', '/services/web/update?version=12&rollback=previous', { body: { Name: 'web' } });
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { Warnings: [] });
    assert.deepEqual(calls.at(-1)?.args, ['services', 'web', { Name: 'web' }, { version: 12, rollback: 'previous' }]);
    const n = await h.request('POST', '/nodes/n1/update?version=1', { body: { Availability: 'drain' } });
    assert.equal(n.status, 200);
    assert.equal(n.text, '');
    const l = await h.request('GET', `/nodes?filters=${encodeURIComponent(JSON.stringify({ role: ['manager'] }))}`);
    assert.deepEqual(l.json, [{ ID: 'n1' }]);
    assert.deepEqual([...(calls.at(-1)?.args[1] as Map<string, string[]>)], [['role', ['manager']]]);
  });
});
