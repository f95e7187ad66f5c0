// Cluster (CSI) volumes through the docker CLI 28 and raw HTTP at both sides of API 1.42: off a
// manager a ClusterVolumeSpec gets dockerd's 503 and PUT its "swarm is unavailable"; on a manager
// `docker volume create --type mount` makes a cluster volume (Scope global, ClusterVolume) listed
// beside the local ones, found by name and by ID, updated (availability), marked for removal and
// removed by force; a 1.41 client sees local volumes only and creates a local one.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loopbackSlot } from '../helpers/loopback-slot.ts';

// Loopback addresses of this file: 127.0.<n>.3 (see cluster-secrets.test.ts for the others).
const ip = `127.0.${10 + loopbackSlot() * 4}.3`;

async function ok(d: TestDaemon, args: string[]): Promise<string> {
  const r = await d.docker(args);
  assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}`);
  return r.stdout;
}

describe('cluster volumes', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
  });
  after(async () => d?.cleanup());

  test('off a manager: 503s; on a manager: create, ls, inspect, update, rm through the CLI, hidden from 1.41 clients', async () => {
    const body = { Name: 'cv', Driver: 'csi.example', ClusterVolumeSpec: { AccessMode: { MountVolume: {} } } };
    const create = await d.request('POST', '/v1.42/volumes/create', { body });
    assert.equal(create.status, 503);
    assert.match(create.json<{ message: string }>().message, /^This node is not a swarm manager/);
    const put = await d.request('PUT', '/v1.42/volumes/cv?version=1', { body: {} });
    assert.deepEqual(
      [put.status, put.json<{ message: string }>().message],
      [503, 'volume update only valid for cluster volumes, but swarm is unavailable'],
    );
    const local = await d.request('POST', '/v1.41/volumes/create', { body: { ...body, Driver: 'local' } });
    assert.equal(local.status, 201, 'before 1.42 the spec is not read');
    assert.equal(local.json<{ Scope: string }>().Scope, 'local');
    await ok(d, ['volume', 'rm', 'cv']);

    // On a manager (one test: the steps depend on each other).
    await ok(d, ['swarm', 'init', '--advertise-addr', ip, '--listen-addr', `${ip}:2377`]);
    await ok(d, ['volume', 'create', 'localvol']);
    const out = await ok(d, [
      'volume',
      'create',
      '--driver',
      'csi.example',
      '--type',
      'mount',
      '--scope',
      'multi',
      '--sharing',
      'readonly',
      '--group',
      'g1',
      '--limit-bytes',
      '1G',
      '--topology-required',
      'region=r1',
      '--availability',
      'pause',
      '--label',
      'a=b',
      'data',
    ]);
    assert.equal(out.trim(), 'data');
    const v = JSON.parse(await ok(d, ['volume', 'inspect', 'data']))[0];
    assert.equal(v.Scope, 'global');
    assert.equal(v.Driver, 'csi.example');
    assert.deepEqual(v.Labels, { a: 'b' });
    assert.match(v.CreatedAt, /^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(\.\d+)? \+0000 UTC$/);
    assert.deepEqual(v.ClusterVolume.Spec, {
      Group: 'g1',
      AccessMode: { Scope: 'multi', Sharing: 'readonly', MountVolume: {} },
      AccessibilityRequirements: { Requisite: [{ Segments: { region: 'r1' } }] },
      CapacityRange: { RequiredBytes: 0, LimitBytes: 1073741824 },
      Availability: 'pause',
    });
    const id = v.ClusterVolume.ID as string;
    assert.deepEqual(JSON.parse(await ok(d, ['volume', 'inspect', id]))[0].Name, 'data', 'by ID');
    const dup = await d.docker(['volume', 'create', '--driver', 'x', '--type', 'block', 'DATA']);
    assert.notEqual(dup.code, 0);
    assert.match(dup.stderr, /name conflicts with an existing object/);

    const names = (v: string) =>
      d.request('GET', `/v${v}/volumes`).then((r) =>
        r
          .json<{ Volumes: Array<{ Name: string }> }>()
          .Volumes.map((x) => x.Name)
          .sort(),
      );
    assert.deepEqual(await names('1.42'), ['data', 'localvol']);
    assert.deepEqual(await names('1.41'), ['localvol']);
    assert.equal((await d.request('GET', '/v1.41/volumes/data')).status, 404);
    assert.match(await ok(d, ['volume', 'ls', '--cluster']), /data/);

    await ok(d, ['volume', 'update', '--availability', 'drain', 'data']);
    assert.equal(JSON.parse(await ok(d, ['volume', 'inspect', 'data']))[0].ClusterVolume.Spec.Availability, 'drain');

    // No CSI plugin serves csi.example: as swarmkit, removal waits for it; force deletes.
    await ok(d, ['volume', 'rm', 'data']);
    assert.equal((await d.request('GET', '/volumes/data')).status, 200);
    assert.equal((await d.request('DELETE', '/v1.41/volumes/data?force=1')).status, 204, 'a 1.41 force remove of a missing local volume');
    assert.equal((await d.request('GET', '/volumes/data')).status, 200, '… does not reach the cluster');
    await ok(d, ['volume', 'rm', '--force', 'data']);
    const gone = await d.request('GET', '/volumes/data');
    assert.deepEqual([gone.status, gone.json<{ message: string }>().message], [404, 'volume data not found']);
    await ok(d, ['volume', 'rm', 'localvol']);
    await ok(d, ['swarm', 'leave', '--force']);
  });
});
