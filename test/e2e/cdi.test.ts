// CDI devices (issue 14): specs in a temporary spec directory (JSON and YAML), requested with the
// docker CLI's `--device vendor/class=name`, inject env, a device node, a mount and groups; specs
// are read again when the directory changes; unknown devices and broken specs are reported.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

describe('CDI devices', () => {
  let d: TestDaemon;
  let dir: string;
  let specs: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-cdi-'));
    specs = join(dir, 'cdi');
    await mkdir(specs);
    await mkdir(join(dir, 'share'));
    await writeFile(join(dir, 'share', 'hello'), 'from the host\n');
    await writeFile(
      join(specs, 'vendor.json'),
      JSON.stringify({
        cdiVersion: '0.6.0',
        kind: 'vendor.test/dev',
        containerEdits: { env: ['VENDOR_SPEC=1'] },
        devices: [
          {
            name: 'one',
            containerEdits: {
              env: ['FOO=bar'],
              deviceNodes: [{ path: '/dev/cdi-null', hostPath: '/dev/null' }],
              mounts: [{ hostPath: join(dir, 'share'), containerPath: '/cdi-mnt', options: ['ro', 'rbind'] }],
              additionalGids: [4242],
            },
          },
        ],
      }),
    );
    await writeFile(
      join(specs, 'other.yaml'),
      [
        'cdiVersion: "0.5.0"',
        'kind: other.test/gpu',
        'devices:',
        '  - name: "0"',
        '    containerEdits:',
        '      env: ["GPU=zero"]',
        '',
      ].join('\n'),
    );
    d = await startDaemon({ args: ['--cdi-spec-dir', specs] });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  test('--device vendor/class=name injects env, a device node, a mount and a group; YAML specs too', async () => {
    const r = await d.docker([
      'run',
      '--rm',
      '--device',
      'vendor.test/dev=one',
      '--device',
      'other.test/gpu=0',
      'busybox',
      'sh',
      '-c',
      'echo $FOO $VENDOR_SPEC $GPU; ls -l /dev/cdi-null; cat /cdi-mnt/hello; id -G',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const [env, dev, hello, groups] = r.stdout.trim().split('\n');
    assert.equal(env, 'bar 1 zero');
    assert.match(dev!, /^crw.* 1,\s+3 .*\/dev\/cdi-null$/);
    assert.equal(hello, 'from the host');
    assert.ok(groups!.split(' ').includes('4242'), groups);
    const info = JSON.parse((await d.docker(['info', '--format', '{{json .CDISpecDirs}}'])).stdout);
    assert.deepEqual(info, [specs]);
  });

  test('an unknown device is a clear 400 at create; another driver is refused as dockerd does', async () => {
    const r = await d.docker(['create', '--device', 'vendor.test/dev=missing', 'busybox']);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /unresolvable CDI devices vendor\.test\/dev=missing/);
    const raw = await d.request('POST', '/containers/create', {
      body: { Image: 'busybox', HostConfig: { DeviceRequests: [{ Driver: 'nvidia', Count: -1, Capabilities: [['gpu']] }] } },
    });
    assert.equal(raw.status, 400);
    assert.match(raw.json().message, /could not select device driver "nvidia" with capabilities: \[\[gpu\]\]/);
  });

  test('specs are read again when they change; a broken spec is a warning in /info', async () => {
    await writeFile(
      join(specs, 'late.json'),
      JSON.stringify({ cdiVersion: '0.6.0', kind: 'late.test/dev', devices: [{ name: 'alpha', containerEdits: { env: ['LATE=yes'] } }] }),
    );
    const r = await d.docker(['run', '--rm', '--device', 'late.test/dev=alpha', 'busybox', 'sh', '-c', 'echo $LATE']);
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), 'yes');
    await writeFile(join(specs, 'broken.json'), '{"cdiVersion": "9.0.0", "kind": "x/y", "devices": []}');
    const warnings = (await d.request('GET', '/info')).json().Warnings as string[];
    assert.ok(
      warnings.some((w) => w.includes('broken.json') && w.includes('unsupported cdiVersion 9.0.0')),
      warnings.join('\n'),
    );
  });
});
