// Issue 26: every storage driver passes the same end-to-end flow on a real filesystem of its own —
// pull, run and write, docker diff, commit, export, import, save and load, a multi-stage build,
// system df, a daemon restart (kill -9 and graceful) with running containers, removal and prune,
// and at the end no snapshot left in the driver's snapshotter. One entry of DRIVERS per driver:
// how to give the daemon its filesystem and what to pass it. Also: the drivers this host cannot
// serve refuse the start with one line naming what is missing.
import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gzipSync } from 'node:zlib';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { buildBusyboxLayer } from '../fixtures/busybox-image.ts';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loopFsUnavailable, makeLoopFs, type LoopFs } from '../helpers/loop-fs.ts';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { until } from '../helpers/until.ts';

interface DriverCase {
  /** --storage-driver value. */
  driver: string;
  /** containerd's snapshotter behind it (where the test looks for leftovers). */
  snapshotter: string;
  /** Why the host cannot run this case (the case is skipped with it), or undefined. */
  unavailable(): Promise<string | undefined>;
  /** Readies the daemon's data root `dataRoot` (not yet created); returns its tear-down. */
  setUp(dataRoot: string): Promise<() => Promise<void>>;
  /** Extra daemon arguments besides --storage-driver. */
  args?: string[];
  /**
   * A container's --storage-opt size: dockerd's refusal on this driver, or the limits it enforces
   * (`minSpace`: the daemon's btrfs.min_space as dockerd prints it). Absent: not checked.
   */
  sizeOpt?: { refusal: string } | { minSpace: string };
}

const DRIVERS: DriverCase[] = [
  {
    driver: 'overlay2',
    snapshotter: 'overlayfs',
    unavailable: async () => undefined,
    setUp: async () => async () => undefined,
    sizeOpt: { refusal: "--storage-opt is supported only for overlay over xfs with 'pquota' mount option" },
  },
  {
    driver: 'btrfs',
    snapshotter: 'btrfs',
    unavailable: () => loopFsUnavailable('btrfs'),
    setUp: async (dataRoot) => {
      const fs: LoopFs = await makeLoopFs('btrfs', dataRoot, 1024);
      return () => fs.release();
    },
    // Quotas on from the start (dockerd turns them on when btrfs.min_space is set).
    args: ['--storage-opt', 'btrfs.min_space=16M'],
    sizeOpt: { minSpace: '16.78MB' },
  },
  {
    // The daemon serves containerd this snapshotter itself (a proxy plugin); FUSE mounts, no loop fs.
    driver: 'fuse-overlayfs',
    snapshotter: 'fuse-overlayfs',
    unavailable: async () =>
      !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`) || !findOnPath('mount.fuse3', `${process.env.PATH}:/usr/sbin:/sbin`)
        ? 'fuse-overlayfs or mount.fuse3 is not installed (Debian packages fuse-overlayfs, fuse3)'
        : existsSync('/dev/fuse')
          ? undefined
          : 'no /dev/fuse',
    setUp: async () => async () => undefined,
    sizeOpt: { refusal: '--storage-opt is not supported' },
  },
];

const MTIME = Date.UTC(2024, 0, 1) / 1000;
const BUILD_ENV = { DOCKER_BUILDKIT: '0' };

// ENGINE_TEST_STORAGE_DRIVERS=btrfs,overlay2 runs only those.
const only = process.env.ENGINE_TEST_STORAGE_DRIVERS?.split(',').filter(Boolean);

for (const c of DRIVERS.filter((x) => !only?.length || only.includes(x.driver))) {
  describe(`storage driver ${c.driver}: the whole image and container flow`, { timeout: 900_000 }, async () => {
    const skip = await c.unavailable();
    let d: TestDaemon;
    let reg: TestRegistry;
    let work: string;
    let tearDown: (() => Promise<void>) | undefined;
    let base: string;
    const ok = async (args: string[], opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {}) => {
      const r = await d.docker(args, { timeoutMs: 180_000, ...opts });
      assert.equal(r.code, 0, `docker ${args.join(' ')}: ${r.stderr}\n${r.stdout}`);
      return r.stdout;
    };

    before(async () => {
      if (skip) return;
      work = await mkdtemp(join(tmpdir(), 'engine-storage-'));
      reg = await startRegistry();
      // The base image: busybox, then a layer with files the containers delete and change.
      const busybox = await buildBusyboxLayer();
      const data = await tarToBuffer(async (tw) => {
        await tw.directory('data', { mtime: MTIME, mode: 0o755 });
        await tw.file('data/hello.txt', 'hello from the base image\n', { mtime: MTIME, mode: 0o644 });
        await tw.directory('data/keep', { mtime: MTIME, mode: 0o755 });
        await tw.file('data/keep/a', 'a\n', { mtime: MTIME, mode: 0o644 });
      });
      const config = {
        architecture: 'amd64',
        os: 'linux',
        config: { Env: ['PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin'], Cmd: ['sh'] },
        rootfs: { type: 'layers', diff_ids: [sha256(busybox.tar), sha256(data)] },
        history: [{ created_by: 'busybox' }, { created_by: 'data' }],
      };
      await pushRawImage(`http://${reg.host}`, 'storage/base', 'v1', {
        config,
        layers: [
          { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: busybox.gz },
          { mediaType: 'application/vnd.oci.image.layer.v1.tar+gzip', data: gzipSync(data) },
        ],
      });
      base = `${reg.host}/storage/base:v1`;
      const dir = await mkdtemp(join(tmpdir(), 'engine-t-'));
      tearDown = await c.setUp(join(dir, 'data'));
      d = await startDaemon({ dir, args: ['--storage-driver', c.driver, ...(c.args ?? [])] });
    });
    after(async () => {
      await d?.cleanup();
      await tearDown?.();
      await reg?.cleanup();
      if (work) await rm(work, { recursive: true, force: true });
    });

    test('docker info names the driver; pull unpacks into its snapshotter; run reads the layers', { skip }, async () => {
      const info = (await d.request('GET', '/info')).json();
      assert.equal(info.Driver, c.driver);
      assert.deepEqual(info.DriverStatus, [['driver-type', 'io.containerd.snapshotter.v1']]);
      const pull = await ok(['pull', base]);
      assert.match(pull, /Pull complete/);
      assert.equal(await ok(['run', '--rm', base, 'cat', '/data/hello.txt']), 'hello from the base image\n');
      // The layers are in this driver's snapshotter (what a create's parent lookup reads).
      const diffIds = JSON.parse(await ok(['image', 'inspect', '-f', '{{json .RootFS.Layers}}', base])) as string[];
      const committed = (await snapshots(d, c.snapshotter)).filter((s) => s.kind === 'COMMITTED').map((s) => s.name);
      for (const chain of chainIds(diffIds)) assert.ok(committed.includes(chain), `${chain} not in ${JSON.stringify(committed)}`);
    });

    test('run and write, docker diff, commit, export, import', { skip }, async () => {
      await ok(['run', '--name', 'w1', base, 'sh', '-c', 'echo written > /new.txt && rm /data/hello.txt && echo more >> /data/keep/a']);
      const diff = (await ok(['diff', 'w1'])).trim().split('\n').sort();
      assert.deepEqual(diff, ['A /new.txt', 'C /data', 'C /data/keep', 'C /data/keep/a', 'D /data/hello.txt']);
      // A directory replaced by a new one of the same name (overlay: an opaque directory).
      await ok(['run', '--name', 'w2', base, 'sh', '-c', 'rm -r /data/keep && mkdir /data/keep && echo b > /data/keep/b']);
      const replaced = (await ok(['diff', 'w2'])).trim().split('\n').sort();
      assert.deepEqual(replaced, ['A /data/keep/b', 'C /data', 'C /data/keep', 'D /data/keep/a']);
      await ok(['commit', 'w2', 'replaced:1']);
      assert.equal(await ok(['run', '--rm', 'replaced:1', 'ls', '/data/keep']), 'b\n');
      await ok(['rm', 'w2']);
      await ok(['rmi', 'replaced:1']);

      await ok(['commit', '-c', 'CMD ["cat", "/new.txt"]', 'w1', 'committed:1']);
      assert.equal(await ok(['run', '--rm', 'committed:1']), 'written\n');
      assert.equal(
        await ok(['run', '--rm', 'committed:1', 'sh', '-c', 'test -e /data/hello.txt && echo still there; cat /data/keep/a']),
        'a\nmore\n',
      );
      const layers = JSON.parse(await ok(['image', 'inspect', '-f', '{{json .RootFS.Layers}}', 'committed:1'])) as string[];
      assert.equal(layers.length, 3);

      const exported = join(work, 'w1.tar');
      await ok(['export', '-o', exported, 'w1']);
      const names = (await run('tar', ['-tf', exported])).stdout.split('\n');
      assert.ok(names.includes('new.txt'), 'the export has the written file');
      assert.ok(!names.includes('data/hello.txt'), 'the export lacks the deleted file');
      assert.ok(names.includes('bin/busybox'), 'the export has the image files');

      const id = (await ok(['import', exported, 'imported:1'])).trim();
      assert.match(id, /^sha256:[0-9a-f]{64}$/);
      assert.equal(await ok(['run', '--rm', 'imported:1', 'cat', '/new.txt', '/data/keep/a']), 'written\na\nmore\n');
    });

    test('save, remove, load back: the image runs again', { skip }, async () => {
      const saved = join(work, 'saved.tar');
      await ok(['save', '-o', saved, 'committed:1']);
      const id = (await ok(['image', 'inspect', '-f', '{{.Id}}', 'committed:1'])).trim();
      await ok(['rmi', 'committed:1']);
      assert.notEqual((await d.docker(['image', 'inspect', 'committed:1'])).code, 0);
      assert.match(await ok(['load', '-i', saved]), /Loaded image: committed:1/);
      assert.equal((await ok(['image', 'inspect', '-f', '{{.Id}}', 'committed:1'])).trim(), id);
      assert.equal(await ok(['run', '--rm', 'committed:1']), 'written\n');
    });

    test('a multi-stage build (RUN, COPY --from, COPY, WORKDIR) writes its layers here', { skip }, async () => {
      const ctx = join(work, 'ctx');
      await mkdir(ctx);
      await writeFile(join(ctx, 'ctx.txt'), 'from the context\n');
      await writeFile(
        join(ctx, 'Dockerfile'),
        [
          `FROM ${base} AS first`,
          'RUN echo from the first stage > /built.txt && rm /data/hello.txt',
          `FROM ${base}`,
          'COPY --from=first /built.txt /built.txt',
          'COPY ctx.txt /ctx.txt',
          'WORKDIR /work',
          'RUN cat /built.txt /ctx.txt > both.txt',
          'CMD ["cat", "/work/both.txt", "/data/hello.txt"]',
        ].join('\n') + '\n',
      );
      await ok(['build', '-t', 'built:1', ctx], { env: BUILD_ENV, timeoutMs: 300_000 });
      assert.equal(await ok(['run', '--rm', 'built:1']), 'from the first stage\nfrom the context\nhello from the base image\n');
    });

    test('system df counts images, containers and their sizes', { skip }, async () => {
      const df = (await d.request('GET', '/system/df')).json();
      const baseSize = Number((await ok(['image', 'inspect', '-f', '{{.Size}}', base])).trim());
      const img = df.Images.find((i: { RepoTags: string[] }) => i.RepoTags?.includes(base));
      assert.ok(img, JSON.stringify(df.Images));
      assert.equal(img.Size, baseSize);
      assert.ok(baseSize > 1_000_000, `busybox and the data layer are over 1 MB (${baseSize})`);
      assert.ok(df.LayersSize >= baseSize, `LayersSize ${df.LayersSize}`);
      const w1 = df.Containers.find((x: { Names: string[] }) => x.Names.includes('/w1'));
      assert.ok(w1 && w1.SizeRw > 0, JSON.stringify(w1));
      const cli = await ok(['system', 'df', '--format', '{{.Type}} {{.TotalCount}}']);
      assert.match(cli, /^Images [4-9]\d*$/m);
      assert.match(cli, /^Containers 1$/m);
    });

    test(
      '--storage-opt size on a container: limited, or refused as dockerd does',
      { skip: skip ?? (c.sizeOpt ? false : 'not checked') },
      async () => {
        const create = (storageOpt: Record<string, string>) =>
          d.request('POST', '/containers/create', { body: { Image: base, Cmd: ['true'], HostConfig: { StorageOpt: storageOpt } } });
        const refused = async (storageOpt: Record<string, string>, message: string) => {
          const r = await create(storageOpt);
          assert.equal(r.status, 500, r.text());
          assert.equal(r.json().message, message);
        };
        if (c.sizeOpt && 'refusal' in c.sizeOpt) {
          await refused({ size: '1G' }, c.sizeOpt.refusal);
        } else if (c.sizeOpt) {
          await refused({ size: '8M' }, `btrfs: storage size cannot be less than ${c.sizeOpt.minSpace}`);
          await refused({ size: '0' }, 'btrfs: invalid storage size: 0B');
          await refused({ size: 'abc' }, "invalid size: 'abc'");
          await refused({ size: '20M', foo: '1' }, 'unknown option foo');
          const over = await d.docker([
            'run',
            '--rm',
            '--storage-opt',
            'size=20M',
            base,
            'sh',
            '-c',
            'dd if=/dev/zero of=/big bs=1M count=40',
          ]);
          assert.notEqual(over.code, 0, over.stdout);
          assert.match(over.stderr, /Disk quota exceeded/);
          const under = await d.docker([
            'run',
            '--rm',
            '--storage-opt',
            'size=20M',
            base,
            'sh',
            '-c',
            'dd if=/dev/zero of=/big bs=1M count=5 2>/dev/null && echo fits',
          ]);
          assert.equal(under.stdout, 'fits\n', under.stderr);
        }
        assert.deepEqual(
          (await ok(['ps', '-a', '--format', '{{.Names}}'])).trim().split('\n').sort(),
          ['w1'],
          'refused creates leave nothing',
        );
      },
    );

    test('restart (kill -9, then graceful) with running containers: they run on, their layer intact', { skip }, async () => {
      await ok([
        'run',
        '-d',
        '--name',
        'keep',
        '--restart',
        'always',
        '--stop-timeout',
        '1',
        base,
        'sh',
        '-c',
        'echo marker > /m; exec sleep 1000',
      ]);
      await until('the marker', async () => ((await d.docker(['exec', 'keep', 'cat', '/m'])).stdout === 'marker\n' ? true : undefined));
      const pid = (await ok(['inspect', '-f', '{{.State.Pid}}', 'keep'])).trim();
      await d.kill9();
      await d.restart();
      assert.equal((await ok(['inspect', '-f', '{{.State.Running}} {{.State.Pid}}', 'keep'])).trim(), `true ${pid}`);
      assert.equal(await ok(['exec', 'keep', 'cat', '/m', '/data/hello.txt']), 'marker\nhello from the base image\n');
      await d.stop();
      await d.restart();
      await until('keep restarted by its policy', async () =>
        (await d.docker(['inspect', '-f', '{{.State.Running}}', 'keep'])).stdout.trim() === 'true' ? true : undefined,
      );
      assert.equal(await ok(['exec', 'keep', 'cat', '/m']), 'marker\n');
    });

    test('containers and images removed, pruned: nothing left in the snapshotter', { skip }, async () => {
      await ok(['rm', '-f', 'keep']);
      await ok(['container', 'prune', '-f']);
      assert.equal((await ok(['ps', '-aq'])).trim(), '');
      await ok(['rmi', 'imported:1']);
      const pruned = await ok(['image', 'prune', '-af']);
      assert.match(pruned, /Total reclaimed space/);
      await ok(['builder', 'prune', '-af']);
      assert.equal((await ok(['images', '-aq'])).trim(), '');
      const left = await until(
        'the snapshotter emptied',
        async () => {
          const s = await snapshots(d, c.snapshotter);
          return s.length === 0 ? s : undefined;
        },
        60_000,
        500,
      ).catch(async (err: Error) => assert.fail(`${err.message}: ${JSON.stringify(await snapshots(d, c.snapshotter))}`));
      assert.deepEqual(left, []);
      // And the filesystem agrees: for btrfs no subvolume of the snapshotter remains.
      if (c.driver === 'btrfs') {
        const subvols = await run('btrfs', [
          'subvolume',
          'list',
          '-o',
          join(d.dataRoot, 'containerd', 'io.containerd.snapshotter.v1.btrfs'),
        ]);
        assert.equal(subvols.code, 0, subvols.stderr);
        assert.equal(subvols.stdout.trim(), '', 'no subvolume left');
      }
      // For fuse-overlayfs: no snapshot directory and no FUSE mount of the daemon's remains.
      if (c.driver === 'fuse-overlayfs') {
        assert.deepEqual(readdirSync(join(d.dataRoot, 'fuse-overlayfs', 'snapshots')), [], 'no snapshot directory left');
        const fuse = (await readFile('/proc/self/mountinfo', 'utf8'))
          .split('\n')
          .map((l) => l.split(' '))
          .filter((f) => f.length > 8 && f[4]!.startsWith(`${d.dir}/`) && f[f.indexOf('-') + 1] === 'fuse.fuse-overlayfs');
        assert.deepEqual(
          fuse.map((f) => f[4]),
          [],
          'no FUSE mount left',
        );
      }
    });
  });
}

describe('storage drivers the host cannot serve refuse the start with one line', { timeout: 120_000 }, () => {
  const refusal = async (args: string[]) => {
    const d = await startDaemon({ args, waitReady: false });
    try {
      const code = await Promise.race([d.exited, new Promise<string>((r) => setTimeout(() => r('still running'), 60_000))]);
      assert.notEqual(code, 0, d.output);
      assert.notEqual(code, 'still running', d.output);
      const fatal = d.output.split('\n').filter((l) => /level=fatal/.test(l));
      assert.equal(fatal.length, 1, d.output);
      return fatal[0]!;
    } finally {
      await d.cleanup();
    }
  };

  test('zfs without the kernel module or the zfs tool: the line names what is missing', async (t) => {
    const zfsTool = (await run('sh', ['-c', 'command -v zfs'])).code === 0;
    const module = (await readFile('/proc/filesystems', 'utf8')).includes('\tzfs\n');
    if (zfsTool && module) return t.skip('this host has ZFS');
    const line = await refusal(['--storage-driver', 'zfs']);
    assert.match(line, /storage driver zfs/);
    if (!module) assert.match(line, /the zfs kernel module is not loaded/);
    if (!zfsTool) assert.match(line, /the zfs tool is not installed/);
  });

  test('btrfs on a data root that is not btrfs: the line says on what it is', async () => {
    const line = await refusal(['--storage-driver', 'btrfs']);
    assert.match(line, /storage driver btrfs needs the data root on a btrfs filesystem: .* is on [a-z0-9]+/);
  });
});

/** The snapshots of the daemon's namespace in one snapshotter. */
async function snapshots(d: TestDaemon, snapshotter: string): Promise<Array<{ name: string; kind: string }>> {
  const client = new SupervisorClient(join(d.execRoot, 'containerd', 'containerd.sock'), { namespace: 'engine', snapshotter });
  try {
    return (await client.snapshots.list()).map((s) => ({ name: s.name, kind: String(s.kind) }));
  } finally {
    client.close();
  }
}

/** Chain IDs of an image's layers (the snapshot names a pull commits). */
function chainIds(diffIds: string[]): string[] {
  const out: string[] = [];
  for (const id of diffIds) out.push(out.length ? sha256(`${out.at(-1)} ${id}`) : id);
  return out;
}
