// System routes: /_ping's negotiation headers (GET and HEAD), /version and /info from the backend.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { registerSystemDfRoutes, type DiskUsageBackend } from './system-df.ts';
import { registerSystemRoutes, type SystemBackend } from './system.ts';

describe('system routes', () => {
  const { backend } = fakeBackend<SystemBackend>({
    version: { Version: '0.1.0', ApiVersion: '1.51' },
    info: { Name: 'host' },
    experimental: false,
    swarmState: 'inactive',
  });
  const df = fakeBackend<DiskUsageBackend>({ usage: { Images: [] }, pruneBuildCache: { CachesDeleted: null, SpaceReclaimed: 0 } });
  const h = new RouteHarness((r) => {
    registerSystemRoutes(r, backend);
    registerSystemDfRoutes(r, df.backend);
  });
  after(() => h.close());

  test('/_ping answers OK with the headers clients negotiate from; HEAD has no body', async () => {
    const g = await h.request('GET', '/_ping');
    assert.equal(g.status, 200);
    assert.equal(g.text, 'OK');
    assert.equal(g.headers['api-version'], '1.51');
    assert.equal(g.headers['ostype'], 'linux');
    assert.equal(g.headers['builder-version'], '1');
    assert.equal(g.headers['swarm'], 'inactive');
    assert.equal(g.headers['cache-control'], 'no-cache, no-store, must-revalidate');
    const head = await h.request('HEAD', '/v1.41/_ping');
    assert.equal(head.status, 200);
    assert.equal(head.text, '');
  });

  test("/version and /info are the backend's; an unsupported API version is a 400", async () => {
    assert.deepEqual((await h.request('GET', '/version')).json, { Version: '0.1.0', ApiVersion: '1.51' });
    assert.deepEqual((await h.request('GET', '/v1.51/info')).json, { Name: 'host' });
    const old = await h.request('GET', '/v1.11/info');
    assert.equal(old.status, 400);
    // As dockerd: a client older than 1.24 gets the error as plain text, 1.24 itself is served.
    assert.equal(old.headers['content-type'], 'text/plain; charset=utf-8');
    assert.match(
      old.text,
      /^client version 1\.11 is too old\. Minimum supported API version is 1\.24, please upgrade your client to a newer version\n$/,
    );
    assert.equal((await h.request('GET', '/v1.24/info')).status, 200);
  });

  test('/system/df selects kinds from API 1.42 on; an unknown kind is a 400', async () => {
    await h.request('GET', '/v1.42/system/df?type=image&type=volume');
    assert.deepEqual(df.calls.at(-1)?.args[0], { containers: false, images: true, volumes: true, buildCache: false });
    await h.request('GET', '/v1.41/system/df?type=image');
    assert.deepEqual(df.calls.at(-1)?.args[0], { containers: true, images: true, volumes: true, buildCache: true }, 'ignored before 1.42');
    assert.equal((await h.request('GET', '/system/df?type=bogus')).status, 400);
    const p = await h.request('POST', '/build/prune?all=1');
    assert.deepEqual(p.json, { CachesDeleted: null, SpaceReclaimed: 0 });
  });
});
