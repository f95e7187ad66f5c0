// Volume routes on a recording fake backend: body checks before the backend, statuses, filters.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import type { VolumeView } from '../../types/volumes.ts';
import { notFound } from '../../errors.ts';
import { registerVolumeRoutes, type ClusterVolumesBackend, type VolumesBackend } from './volumes.ts';

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

describe('volume routes: cluster volumes from API 1.42 on a manager', () => {
  const local = fakeBackend<VolumesBackend>({
    list: () => [view],
    create: view,
    inspect: (name: string) => {
      if (name === 'v1') return view;
      throw notFound(`get ${name}: no such volume`);
    },
    remove: (name: string, opts: { force: boolean }) => {
      if (name !== 'v1' && !opts.force) throw notFound(`get ${name}: no such volume`);
    },
  });
  const cv: VolumeView & { ClusterVolume: { ID: string } } = {
    Name: 'cv',
    Driver: 'csi',
    Scope: 'global',
    CreatedAt: '2026-01-02 03:04:05 +0000 UTC',
    Labels: null,
    Mountpoint: '',
    Options: null,
    ClusterVolume: { ID: 'abc' },
  };
  let manager = true;
  const clusterCalls: Array<[string, ...unknown[]]> = [];
  const cluster: ClusterVolumesBackend = {
    isManager: () => manager,
    listVolumes: async () => (clusterCalls.push(['list']), [cv]),
    getVolume: async (ref) => {
      clusterCalls.push(['get', ref]);
      if (ref !== 'cv') throw notFound(`volume ${ref} not found`);
      return cv;
    },
    createVolume: async (req) => (clusterCalls.push(['create', req]), cv),
    updateVolume: async (ref, version, body) => void clusterCalls.push(['update', ref, version, body]),
    removeVolume: async (ref, force) => void clusterCalls.push(['remove', ref, force]),
  };
  const h = new RouteHarness((r) => registerVolumeRoutes(r, local.backend, cluster));
  after(() => h.close());
  const last = () => clusterCalls.at(-1);

  test('list: cluster volumes after the local ones from 1.42; a cluster failure is a warning', async () => {
    assert.deepEqual((await h.request('GET', '/v1.41/volumes')).json.Volumes, [view]);
    assert.deepEqual((await h.request('GET', '/v1.42/volumes')).json.Volumes, [view, cv]);
    manager = false;
    assert.deepEqual((await h.request('GET', '/v1.42/volumes')).json.Volumes, [view], 'not a manager: local only');
    manager = true;
    const failing = cluster.listVolumes;
    cluster.listVolumes = async () => {
      throw new Error('store down');
    };
    assert.deepEqual((await h.request('GET', '/v1.51/volumes')).json, { Volumes: [view], Warnings: ['store down'] });
    cluster.listVolumes = failing;
  });

  test('inspect: the local volume first, the cluster one when none is local, from 1.42', async () => {
    assert.equal((await h.request('GET', '/v1.42/volumes/v1')).json.Name, 'v1');
    const old = await h.request('GET', '/v1.41/volumes/cv');
    assert.equal(old.status, 404);
    assert.equal(old.json.message, 'get cv: no such volume');
    assert.deepEqual((await h.request('GET', '/v1.42/volumes/cv')).json, cv);
    const none = await h.request('GET', '/v1.42/volumes/zz');
    assert.deepEqual([none.status, none.json.message], [404, 'volume zz not found']);
  });

  test('create: a ClusterVolumeSpec makes a cluster volume from 1.42 (decoded as Go does); before, a local one', async () => {
    const body = {
      Name: 'cv',
      Driver: 'csi',
      ClusterVolumeSpec: { accessmode: { Scope: 'single', mountvolume: {} }, Availability: 'pause' },
    };
    const r = await h.request('POST', '/v1.42/volumes/create', { body });
    assert.equal(r.status, 201);
    assert.deepEqual(last(), [
      'create',
      { Name: 'cv', Driver: 'csi', ClusterVolumeSpec: { AccessMode: { Scope: 'single', MountVolume: {} }, Availability: 'pause' } },
    ]);
    const n = clusterCalls.length;
    assert.equal((await h.request('POST', '/v1.41/volumes/create', { body })).status, 201);
    assert.equal(clusterCalls.length, n, 'not the cluster before 1.42');
    assert.deepEqual(local.calls.at(-1), { method: 'create', args: [{ Name: 'cv', Driver: 'csi' }] });
    const bad = await h.request('POST', '/v1.42/volumes/create', {
      body: { Name: 'x', ClusterVolumeSpec: { CapacityRange: { LimitBytes: 'big' } } },
    });
    assert.equal(bad.status, 400);
    assert.match(bad.json.message, /LimitBytes/);
  });

  test('remove: the cluster volume when no local one was found (or with force), from 1.42', async () => {
    assert.equal((await h.request('DELETE', '/v1.42/volumes/v1')).status, 204);
    const n = clusterCalls.length;
    assert.equal(clusterCalls.length, n, 'a local volume removed: the cluster is not asked');
    assert.equal((await h.request('DELETE', '/v1.42/volumes/cv')).status, 204);
    assert.deepEqual(last(), ['remove', 'cv', false]);
    assert.equal((await h.request('DELETE', '/v1.42/volumes/v1?force=1')).status, 204);
    assert.deepEqual(last(), ['remove', 'v1', true]);
    const old = await h.request('DELETE', '/v1.41/volumes/cv');
    assert.deepEqual([old.status, old.json.message], [404, 'get cv: no such volume']);
  });

  test('update: 503 off a manager; the version parsed as Go does; the body decoded', async () => {
    manager = false;
    const off = await h.request('PUT', '/v1.42/volumes/abc?version=3', { body: {} });
    assert.deepEqual([off.status, off.json.message], [503, 'volume update only valid for cluster volumes, but swarm is unavailable']);
    manager = true;
    const bad = await h.request('PUT', '/v1.42/volumes/abc?version=x', { body: {} });
    assert.deepEqual(
      [bad.status, bad.json.message],
      [400, `invalid swarm object version 'x': strconv.ParseUint: parsing "x": invalid syntax`],
    );
    const ok = await h.request('PUT', '/v1.42/volumes/abc?version=3', { body: { spec: { availability: 'drain' } } });
    assert.equal(ok.status, 200);
    assert.deepEqual(last(), ['update', 'abc', 3, { Spec: { Availability: 'drain' } }]);
  });
});
