// Volume routes on a recording fake backend: body checks before the backend, statuses, filters.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { VolumeView } from '../../types/volumes.ts';
import { registerVolumeRoutes, type VolumesBackend } from './volumes.ts';

const view: VolumeView = { Name: 'v1', Driver: 'local', Mountpoint: '/x', Labels: null, Scope: 'local', Options: null, CreatedAt: '' };

describe('volume routes', () => {
  const { backend, calls } = fakeBackend<VolumesBackend>({
    list: [view],
    create: view,
    inspect: view,
    remove: undefined,
    prune: { VolumesDeleted: ['v1'], SpaceReclaimed: 3 },
  });
  const h = new RouteHarness((r) => registerVolumeRoutes(r, backend));
  after(() => h.close());

  test('list wraps the volumes with Warnings; filters reach the backend parsed', async () => {
    const r = await h.request('GET', `/volumes?filters=${encodeURIComponent('{"dangling":["true"]}')}`);
    assert.equal(r.status, 200);
    assert.deepEqual(r.json, { Volumes: [view], Warnings: [] });
    assert.deepEqual([...(calls.at(-1)?.args[0] as { filters: Map<string, string[]> }).filters], [['dangling', ['true']]]);
    assert.equal((await h.request('GET', '/volumes?filters=%7Bnot')).status, 400);
  });

  test('create answers 201; wrong types are a 400 naming the field, before the backend', async () => {
    const ok = await h.request('POST', '/volumes/create', { body: { Name: 'v1', Labels: { a: 'b' } } });
    assert.equal(ok.status, 201);
    assert.deepEqual(calls.at(-1), { method: 'create', args: [{ Name: 'v1', Labels: { a: 'b' } }] });
    const before = calls.length;
    for (const body of [{ Name: 5 }, { Driver: [] }, { Labels: { a: 1 } }, { DriverOpts: 'x' }]) {
      const r = await h.request('POST', '/volumes/create', { body });
      assert.equal(r.status, 400, JSON.stringify(body));
      assert.match(r.json.message, new RegExp(Object.keys(body)[0]!));
    }
    assert.equal(calls.length, before, 'nothing reached the backend');
    // As Go decodes volume.CreateOptions: names in any case, read back canonical; Go's wording.
    await h.request('POST', '/volumes/create', { body: { name: 'v2', driveropts: { Size: '1g' }, extra: 1 } });
    assert.deepEqual(calls.at(-1)?.args[0], { Name: 'v2', DriverOpts: { Size: '1g' } });
    const bad = await h.request('POST', '/volumes/create', { body: { name: 7 } });
    assert.equal(bad.json.message, 'invalid JSON: json: cannot unmarshal number 7 into Go struct field CreateOptions.Name of type string');
  });

  test('remove is 204 with force passed; a name with a slash is one segment only', async () => {
    const r = await h.request('DELETE', '/volumes/v1?force=1');
    assert.equal(r.status, 204);
    assert.deepEqual(calls.at(-1), { method: 'remove', args: ['v1', { force: true }] });
    assert.equal((await h.request('DELETE', '/volumes/a/b')).status, 404);
  });

  test("prune before API 1.42 takes named volumes too (all=true added); from 1.42 the filters are the client's", async () => {
    assert.equal((await h.request('POST', '/v1.41/volumes/prune')).status, 200);
    assert.deepEqual([...(calls.at(-1)?.args[0] as Map<string, string[]>)], [['all', ['true']]]);
    assert.equal((await h.request('POST', `/v1.41/volumes/prune?filters=${encodeURIComponent('{"label":["a"]}')}`)).status, 200);
    assert.deepEqual(
      [...(calls.at(-1)?.args[0] as Map<string, string[]>)],
      [
        ['label', ['a']],
        ['all', ['true']],
      ],
    );
    assert.equal((await h.request('POST', '/v1.42/volumes/prune')).status, 200);
    assert.deepEqual([...(calls.at(-1)?.args[0] as Map<string, string[]>)], []);
  });
});
