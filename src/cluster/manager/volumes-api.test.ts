// Cluster volumes: the spec as swarmkit's round trip leaves it and the Volume view (pure), then the
// API on a real one-member etcd: swarmkit's create checks and words, one volume per name in any
// case, lookups by ID, name and ID prefix, availability-only updates with the version checked and
// the volume addressed by ID, and removal (marked for the CSI plugin; force deletes).
import assert from 'node:assert/strict';
import { rm } from 'node:fs/promises';
import { after, before, describe, test } from 'node:test';
import { startTestEtcd } from '../../../test/helpers/etcd-member.ts';
import { EngineError } from '../../errors.ts';
import type { EtcdMember } from '../store/etcd-process.ts';
import type { ClusterStore } from '../store/store.ts';
import { goJsonTime, goTimeString, normalizeSpec, volumeView, volumeRecord } from './volume-spec.ts';
import { ClusterVolumesApi } from './volumes-api.ts';

const rejects = (status: number, message: string) => (e: unknown) =>
  e instanceof EngineError && e.status === status && e.message === message;
const mount = { AccessMode: { Scope: 'single', Sharing: 'none', MountVolume: {} } };

describe('cluster volume spec and view', () => {
  test('normalised as the swarmkit round trip: unknown enums to their zero values, mount over block, empty lists dropped', () => {
    assert.deepEqual(
      normalizeSpec({
        AccessMode: { Scope: 'galaxy', Sharing: 'weird', BlockVolume: {}, MountVolume: { FsType: 'ext4', MountFlags: [] } },
        Secrets: [],
        AccessibilityRequirements: { Requisite: [{ Segments: { zone: 'a' } }, {}], Preferred: [] },
        CapacityRange: { RequiredBytes: 10 },
        Availability: 'sometimes',
      }),
      {
        AccessMode: { Scope: 'single', Sharing: 'none', MountVolume: { FsType: 'ext4' } },
        AccessibilityRequirements: { Requisite: [{ Segments: { zone: 'a' } }, {}] },
        CapacityRange: { RequiredBytes: 10, LimitBytes: 0 },
        Availability: 'active',
      },
    );
    assert.deepEqual(
      normalizeSpec({ Group: 'g', AccessMode: { Scope: 'multi', Sharing: 'all', BlockVolume: {} }, Availability: 'drain' }),
      {
        Group: 'g',
        AccessMode: { Scope: 'multi', Sharing: 'all', BlockVolume: {} },
        Availability: 'drain',
      },
    );
  });

  test("swarmkit's create checks, in order", () => {
    const t = '2026-01-02T03:04:05.120Z';
    assert.throws(
      () => volumeRecord('i', { ClusterVolumeSpec: mount }, t),
      rejects(400, 'rpc error: code = InvalidArgument desc = meta: name must be provided'),
    );
    assert.throws(
      () => volumeRecord('i', { Name: 'v', ClusterVolumeSpec: {} }, t),
      rejects(400, 'rpc error: code = InvalidArgument desc = AccessMode must not be nil'),
    );
    assert.throws(
      () => volumeRecord('i', { Name: 'v', ClusterVolumeSpec: { AccessMode: { Scope: 'single' } } }, t),
      rejects(400, 'rpc error: code = InvalidArgument desc = Volume AccessMode must specify either Mount or Block access type'),
    );
  });

  test('the view: Go times, global scope, null maps when absent', () => {
    assert.equal(goJsonTime('2026-01-02T03:04:05.120Z'), '2026-01-02T03:04:05.12Z');
    assert.equal(goJsonTime('2026-01-02T03:04:05.000Z'), '2026-01-02T03:04:05Z');
    assert.equal(goTimeString('2026-01-02T03:04:05.120Z'), '2026-01-02 03:04:05.12 +0000 UTC');
    const rec = volumeRecord('id1', { Name: 'v', Driver: 'csi.example', Labels: {}, ClusterVolumeSpec: mount }, '2026-01-02T03:04:05.000Z');
    assert.deepEqual(volumeView(rec, 7), {
      ClusterVolume: {
        ID: 'id1',
        Version: { Index: 7 },
        CreatedAt: '2026-01-02T03:04:05Z',
        UpdatedAt: '2026-01-02T03:04:05Z',
        Spec: { AccessMode: { Scope: 'single', Sharing: 'none', MountVolume: {} }, Availability: 'active' },
      },
      CreatedAt: '2026-01-02 03:04:05 +0000 UTC',
      Driver: 'csi.example',
      Labels: {},
      Mountpoint: '',
      Name: 'v',
      Options: null,
      Scope: 'global',
    });
  });
});

describe('cluster volumes in a real etcd', () => {
  let dir: string;
  let member: EtcdMember;
  let store: ClusterStore;
  let api: ClusterVolumesApi;
  before(async () => {
    const etcd = await startTestEtcd();
    dir = etcd.dir;
    member = etcd.member;
    store = await etcd.openStore();
    api = new ClusterVolumesApi(store);
  });
  after(async () => {
    store?.close();
    await member?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('create, one per name in any case, secrets that exist, lookups by ID, name and prefix', async () => {
    const v = (await api.create({ Name: 'data', Driver: 'csi.example', DriverOpts: { size: '1G' }, ClusterVolumeSpec: mount })) as any;
    assert.match(v.ClusterVolume.ID, /^[a-z0-9]{25}$/);
    assert.equal(v.Options.size, '1G');
    await assert.rejects(
      api.create({ Name: 'DATA', ClusterVolumeSpec: mount }),
      rejects(409, 'rpc error: code = Unknown desc = name conflicts with an existing object'),
    );
    await assert.rejects(
      api.create({
        Name: 'other',
        ClusterVolumeSpec: {
          ...mount,
          Secrets: [
            { Key: 'k', Secret: 'nosuch' },
            { Key: 'j', Secret: 'gone' },
          ],
        },
      }),
      rejects(400, 'rpc error: code = InvalidArgument desc = secrets not found: nosuch, gone'),
    );
    await store.create('secrets/s1', { ID: 's1' });
    const withSecret = (await api.create({ Name: 'other', ClusterVolumeSpec: { ...mount, Secrets: [{ Key: 'k', Secret: 's1' }] } })) as any;
    assert.deepEqual(withSecret.ClusterVolume.Spec.Secrets, [{ Key: 'k', Secret: 's1' }]);
    const id = v.ClusterVolume.ID as string;
    assert.deepEqual(await api.get(id), v);
    assert.deepEqual(await api.get('data'), v);
    assert.deepEqual(await api.get(id.slice(0, 10)), v);
    await assert.rejects(api.get('nosuch'), rejects(404, 'volume nosuch not found'));
    assert.deepEqual((await api.list()).map((x: any) => x.Name).sort(), ['data', 'other']);
  });

  test('update: availability only, by ID, at the current version', async () => {
    const v = (await api.get('data')) as any;
    const { ID, Version } = v.ClusterVolume;
    await assert.rejects(
      api.update('data', Version.Index, { Spec: { Availability: 'drain' } }),
      rejects(404, 'rpc error: code = NotFound desc = volume data not found'),
    );
    await assert.rejects(api.update(ID, Version.Index - 1, { Spec: { Availability: 'drain' } }), rejects(409, 'update out of sequence'));
    await api.update(ID, Version.Index, { Spec: { Availability: 'drain', Group: 'ignored' } });
    const after = (await api.get(ID)) as any;
    assert.equal(after.ClusterVolume.Spec.Availability, 'drain');
    assert.equal(after.ClusterVolume.Spec.Group, undefined);
    assert.ok(after.ClusterVolume.Version.Index > Version.Index);
    await api.update(ID, after.ClusterVolume.Version.Index, {});
    assert.equal(((await api.get(ID)) as any).ClusterVolume.Spec.Availability, 'drain', 'no spec: nothing changes');
  });

  test('remove: marked for the CSI plugin (still listed); force deletes it and frees the name; force on none is no error', async () => {
    await api.remove('other', false);
    assert.equal(((await api.get('other')) as any).Name, 'other', 'pending its plugin');
    await api.remove('other', true);
    await assert.rejects(api.get('other'), rejects(404, 'volume other not found'));
    await api.remove('other', true);
    await assert.rejects(api.remove('other', false), rejects(404, 'volume other not found'));
    await api.create({ Name: 'Other', ClusterVolumeSpec: mount });
  });
});
