import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { isVolumeBind, volumeSpecs } from './specs.ts';
import { validateVolumeName } from './names.ts';
import { compileListFilters, compilePruneFilters, type FilterableVolume } from './filters.ts';

describe('volume specs', () => {
  test('Binds: named, anonymous and host paths', () => {
    assert.equal(isVolumeBind('data:/data'), true);
    assert.equal(isVolumeBind('data:/data:ro,nocopy'), true);
    assert.equal(isVolumeBind('/anon'), true);
    assert.equal(isVolumeBind('/host:/data'), false);
    assert.equal(isVolumeBind('/host:/data:ro'), false);
    const specs = volumeSpecs({ Binds: ['data:/data', 'ro:/r/:ro', 'nc:/n:nocopy', '/anon', '/host:/h'] }, {});
    assert.deepEqual(
      specs.map((s) => [s.name, s.destination, s.readOnly, s.copy, s.mode]),
      [
        ['data', '/data', false, true, 'z'],
        ['ro', '/r', true, true, 'ro'],
        ['nc', '/n', false, false, 'nocopy'],
        [undefined, '/anon', false, true, ''],
      ],
    );
  });

  test('Mounts of type volume carry NoCopy, labels, driver options and a subpath', () => {
    const [s] = volumeSpecs(
      {
        Mounts: [
          {
            Type: 'volume',
            Source: 'v',
            Target: '/v',
            ReadOnly: true,
            VolumeOptions: {
              NoCopy: true,
              Labels: { a: 'b' },
              DriverConfig: { Name: 'local', Options: { type: 'tmpfs', device: 'tmpfs' } },
              Subpath: 'sub/dir',
            },
          },
        ],
      },
      {},
    );
    assert.deepEqual(s, {
      name: 'v',
      destination: '/v',
      readOnly: true,
      copy: false,
      mode: '',
      subpath: 'sub/dir',
      labels: { a: 'b' },
      driver: 'local',
      driverOpts: { type: 'tmpfs', device: 'tmpfs' },
      origin: 'mount',
    });
    assert.throws(
      () => volumeSpecs({ Mounts: [{ Type: 'volume', Source: 'v', Target: '/v', VolumeOptions: { Subpath: '../../etc' } }] }, {}),
      /subpath must be a relative path/,
    );
    assert.throws(() => volumeSpecs({ Mounts: [{ Type: 'volume', Target: 'rel' }] }, {}), /must be absolute/);
  });

  test('image VOLUMEs become anonymous volumes unless a mount of the user covers them', () => {
    const specs = volumeSpecs(
      { Binds: ['/host:/data'], Mounts: [{ Type: 'tmpfs', Target: '/cache' }] },
      { Volumes: { '/data': {}, '/cache': {}, '/var/lib/x': {} } },
    );
    assert.deepEqual(
      specs.map((s) => [s.name, s.destination, s.origin]),
      [[undefined, '/var/lib/x', 'image']],
    );
  });

  test('duplicate mount points and bad modes are refused', () => {
    assert.throws(() => volumeSpecs({ Binds: ['a:/x', 'b:/x/'] }, {}), /Duplicate mount point: \/x/);
    assert.throws(
      () => volumeSpecs({ Binds: ['/h:/x'], Mounts: [{ Type: 'volume', Source: 'v', Target: '/x' }] }, {}),
      /Duplicate mount point/,
    );
    assert.throws(() => volumeSpecs({ Binds: ['a:/x:bogus'] }, {}), /invalid mode: bogus/);
    assert.throws(() => volumeSpecs({ Binds: ['a:/'] }, {}), /destination can't be '\/'/);
  });

  test('names as the local driver accepts them', () => {
    for (const ok of ['data', 'a1', 'my_vol.2-x']) validateVolumeName(ok);
    for (const bad of ['a', '../x', 'a/b', '.hidden', '-x', 'x y', '']) {
      assert.throws(() => validateVolumeName(bad), /includes invalid characters for a local volume name/, bad);
    }
    // A directory name: NAME_MAX bytes at most (a 400, not mkdir's ENAMETOOLONG as a 500).
    validateVolumeName('v'.repeat(255));
    assert.throws(() => validateVolumeName('v'.repeat(256)), {
      code: 'INVALID_PARAMETER',
      message: /volume name is too long \(256 bytes, at most 255\)/,
    });
  });
});

describe('volume filters', () => {
  const vols: FilterableVolume[] = [
    { Name: 'data', Driver: 'local', Labels: { env: 'prod' }, refs: 1 },
    { Name: 'cache', Driver: 'local', Labels: null, refs: 0 },
    { Name: 'f00', Driver: 'local', Labels: { 'com.docker.volume.anonymous': '' }, refs: 0 },
  ];
  const names = (m: (v: FilterableVolume) => boolean) => vols.filter(m).map((v) => v.Name);

  test('list: dangling, name (regexp), label, driver', () => {
    assert.deepEqual(names(compileListFilters(new Map([['dangling', ['true']]]))), ['cache', 'f00']);
    assert.deepEqual(names(compileListFilters(new Map([['dangling', ['0']]]))), ['data']);
    assert.deepEqual(names(compileListFilters(new Map([['name', ['^ca']]]))), ['cache']);
    assert.deepEqual(names(compileListFilters(new Map([['label', ['env=prod']]]))), ['data']);
    assert.deepEqual(names(compileListFilters(new Map([['label', ['env=dev']]]))), []);
    assert.deepEqual(names(compileListFilters(new Map([['driver', ['local']]]))), ['data', 'cache', 'f00']);
    assert.throws(() => compileListFilters(new Map([['bogus', ['x']]])), /invalid filter 'bogus'/);
    assert.throws(() => compileListFilters(new Map([['dangling', ['maybe']]])), /invalid filter 'dangling=maybe'/);
  });

  test('prune: unused anonymous only, unless all=true', () => {
    const anon = 'com.docker.volume.anonymous';
    assert.deepEqual(names(compilePruneFilters(new Map(), anon)), ['f00']);
    assert.deepEqual(names(compilePruneFilters(new Map([['all', ['true']]]), anon)), ['cache', 'f00']);
    assert.deepEqual(
      names(
        compilePruneFilters(
          new Map([
            ['all', ['1']],
            ['label!', [anon]],
          ]),
          anon,
        ),
      ),
      ['cache'],
    );
  });
});
