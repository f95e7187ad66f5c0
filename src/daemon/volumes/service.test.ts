import assert from 'node:assert/strict';
import { existsSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, test } from 'node:test';
import { openDatabase, type EngineDatabase } from '../../store/database.ts';
import { RecordTable } from '../../store/kv.ts';
import { tempDir, type TempDir } from '../../../test/helpers/temp-dir.ts';
import { Logger } from '../../util/log.ts';
import type { VolumeRecord, VolumeUser } from './contract.ts';
import { VolumeService } from './service.ts';

let tmp: TempDir;
let db: EngineDatabase;
let svc: VolumeService;
let users: VolumeUser[];
let table: RecordTable<VolumeRecord>;
const events: Array<{ Action: string; ID: string }> = [];

beforeEach(async () => {
  tmp = tempDir('engine-volumes-');
  db = openDatabase(tmp.file('engine.db'));
  users = [];
  events.length = 0;
  table = new RecordTable<VolumeRecord>(db, 'volumes');
  svc = new VolumeService({
    table,
    root: tmp.file('volumes'),
    tmpDir: tmp.file('tmp'),
    log: new Logger({ level: 'fatal', format: 'text', raw: false }),
    events: { publish: (m) => events.push({ Action: m.Action, ID: m.Actor?.ID ?? '' }) },
    users: () => users.map((u) => ({ ...u })),
  });
  await svc.init();
});
afterEach(() => {
  db.close();
  tmp.remove();
});

describe('VolumeService', () => {
  test('create, inspect, list with usage, idempotent create', async () => {
    const v = await svc.create({ Name: 'data', Labels: { a: 'b' }, DriverOpts: {} });
    assert.equal(v.Name, 'data');
    assert.equal(v.Driver, 'local');
    assert.equal(v.Scope, 'local');
    assert.equal(v.Mountpoint, join(tmp.dir, 'volumes', 'data', '_data'));
    assert.match(v.CreatedAt, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    assert.deepEqual(v.Labels, { a: 'b' });
    assert.equal(statSync(v.Mountpoint).isDirectory(), true);
    writeFileSync(join(v.Mountpoint, 'f'), 'hello');
    const again = await svc.create({ Name: 'data', Labels: { other: 'x' } });
    assert.deepEqual(again.Labels, { a: 'b' }, 'an existing volume is returned unchanged');
    const anon = await svc.create({});
    assert.match(anon.Name, /^[0-9a-f]{64}$/);
    users = [{ id: 'c1', running: false, volumes: ['data'] }];
    const listed = await svc.list({ usage: true });
    assert.deepEqual(
      listed.map((x) => [x.Name, x.UsageData]),
      [
        [anon.Name, { Size: 0, RefCount: 0 }],
        ['data', { Size: 5, RefCount: 1 }],
      ].sort(),
    );
    assert.equal(
      (await svc.list()).every((x) => x.UsageData === undefined),
      true,
    );
    assert.deepEqual(
      events.map((e) => e.Action),
      ['create', 'create'],
    );
  });

  test('remove: 404 unknown (unless force), 409 in use with the container ids', async () => {
    await assert.rejects(
      svc.remove('nope', { force: false }),
      (e: Error & { status?: number }) => e.status === 404 && e.message === 'get nope: no such volume',
    );
    await svc.remove('nope', { force: true });
    const v = await svc.create({ Name: 'busy' });
    users = [
      { id: 'c1', running: false, volumes: ['busy'] },
      { id: 'c2', running: true, volumes: ['busy'] },
    ];
    await assert.rejects(
      svc.remove('busy', { force: true }),
      (e: Error & { status?: number }) => e.status === 409 && e.message === 'remove busy: volume is in use - [c1, c2]',
    );
    users = [];
    await svc.remove('busy', { force: false });
    assert.equal(existsSync(join(tmp.dir, 'volumes', 'busy')), false);
    assert.equal(existsSync(v.Mountpoint), false);
    await assert.rejects(svc.inspect('busy'), /no such volume/);
  });

  test('prepare creates named and anonymous volumes; release(rm -v) removes only the anonymous ones', async () => {
    const hc = { Binds: ['named:/n:ro'], Mounts: [{ Type: 'volume' as const, Target: '/m', VolumeOptions: { Labels: { k: 'v' } } }] };
    const mounts = await svc.prepare('c1', hc, { Volumes: { '/img': {} } });
    assert.equal(mounts.length, 3);
    assert.deepEqual(mounts[0], {
      Type: 'volume',
      Name: 'named',
      Source: svc.dataPath('named'),
      Destination: '/n',
      Driver: 'local',
      Mode: 'ro',
      RW: false,
      Propagation: '',
    });
    const anon = mounts.slice(1).map((m) => m.Name!);
    for (const n of anon) assert.match(n, /^[0-9a-f]{64}$/);
    assert.deepEqual((await svc.inspect(anon[0]!)).Labels, { k: 'v', 'com.docker.volume.anonymous': '' });
    // Pending until the record exists: in use already.
    await assert.rejects(svc.remove('named', { force: false }), /volume is in use - \[c1\]/);
    await svc.release({ Id: 'c1', HostConfig: hc, Config: { Volumes: { '/img': {} } }, Mounts: mounts }, true);
    assert.deepEqual(
      (await svc.list()).map((v) => v.Name),
      ['named'],
    );
  });

  test('prepare refuses bad names before creating anything', async () => {
    await assert.rejects(svc.prepare('c1', { Binds: ['ok:/a', '../evil:/b'] }, {}), /"\.\.\/evil" includes invalid characters/);
    assert.deepEqual(await svc.list(), []);
  });

  test('prune: unused anonymous volumes by default, named ones with all=true, never used ones', async () => {
    await svc.create({ Name: 'named' });
    await svc.create({ Name: 'used', Labels: { 'com.docker.volume.anonymous': '' } });
    const anon = await svc.create({ Labels: { 'com.docker.volume.anonymous': '' } });
    writeFileSync(join(anon.Mountpoint, 'f'), '123');
    users = [{ id: 'c', running: true, volumes: ['used'] }];
    assert.deepEqual(await svc.prune(new Map()), { VolumesDeleted: [anon.Name], SpaceReclaimed: 3 });
    assert.deepEqual(await svc.prune(new Map([['all', ['true']]])), { VolumesDeleted: ['named'], SpaceReclaimed: 0 });
    // A plugin's volume is the plugin's: prune, as dockerd's, takes local ones only.
    table.put('plugged', { Name: 'plugged', Driver: 'someplugin', CreatedAt: '', Labels: null, Options: null });
    assert.deepEqual(await svc.prune(new Map([['all', ['true']]])), { VolumesDeleted: [], SpaceReclaimed: 0 });
    assert.deepEqual(
      table
        .list()
        .map((v) => v.Name)
        .sort(),
      ['plugged', 'used'],
    );
  });

  test('DriverOpts are checked at create', async () => {
    await assert.rejects(svc.create({ Name: 'x1', DriverOpts: { bogus: '1' } }), /invalid option key: "bogus"/);
    await assert.rejects(svc.create({ Name: 'x2', DriverOpts: { type: 'tmpfs' } }), /missing required option: "device"/);
    await assert.rejects(svc.create({ Name: 'x3', Driver: 'nfs-plugin' }), (e: Error & { status?: number }) => e.status === 404);
  });
});
