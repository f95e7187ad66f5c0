// The fuse-overlayfs storage driver end to end: the daemon serves containerd a fuse-overlayfs
// snapshotter (a proxy plugin), containers run on FUSE mounts, and the image and container paths
// work on it — load, run, write, diff, commit, run the commit, export, sizes, removal (containerd's
// garbage collection removes the snapshots through the proxy), and daemon restarts (a clean stop,
// and a kill -9 after which the adopted containerd reaches the new daemon's snapshotter again).
import assert from 'node:assert/strict';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import { tarToBuffer } from '../../src/util/tar-writer.ts';
import { buildBusyboxLayer } from '../fixtures/busybox-image.ts';
import { pushRawImage, sha256, startRegistry, type TestRegistry } from '../helpers/registry.ts';
import { gzipSync } from 'node:zlib';

const skip =
  !findOnPath('fuse-overlayfs', `${process.env.PATH}:/usr/bin`) || !findOnPath('mount.fuse3', `${process.env.PATH}:/usr/sbin:/sbin`)
    ? 'fuse-overlayfs or mount.fuse3 is not installed (Debian packages fuse-overlayfs, fuse3)'
    : !existsSync('/dev/fuse')
      ? 'no /dev/fuse'
      : false;

/** FUSE overlay mounts below `dir` (mount point → options), from this process's mount table. */
function fuseMountsUnder(dir: string): string[] {
  return readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((l) => l.split(' '))
    .filter((f) => f.length > 8 && f[4]!.startsWith(`${dir}/`) && f[f.indexOf('-') + 1] === 'fuse.fuse-overlayfs')
    .map((f) => f[4]!);
}

/** fuse-overlayfs processes serving directories below `dir`. */
function fuseServersOf(dir: string): number[] {
  return readdirSync('/proc')
    .filter((p) => /^\d+$/.test(p))
    .filter((p) => {
      try {
        const cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8');
        return cmd.startsWith('fuse-overlayfs\0') || cmd.includes('/fuse-overlayfs\0') ? cmd.includes(dir) : false;
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

describe('storage driver fuse-overlayfs', { skip }, () => {
  let d: TestDaemon;
  let snapshots: string;
  let registry: TestRegistry;
  let pulled: string;
  before(async () => {
    registry = await startRegistry();
    // busybox and a layer that adds a file and deletes one (a whiteout), pushed without any daemon.
    const base = await buildBusyboxLayer();
    const top = await tarToBuffer(async (tw) => {
      await tw.directory('bin', { mtime: 1, mode: 0o755 });
      await tw.file('bin/.wh.vi', '', { mtime: 1 });
      await tw.file('extra', 'pulled\n', { mtime: 1 });
    });
    const gz = 'application/vnd.oci.image.layer.v1.tar+gzip';
    await pushRawImage(`http://${registry.host}`, 'fuse', 'v1', {
      config: {
        architecture: 'amd64',
        os: 'linux',
        config: { Cmd: ['sh'] },
        rootfs: { type: 'layers', diff_ids: [sha256(base.tar), sha256(top)] },
      },
      layers: [
        { mediaType: gz, data: base.gz },
        { mediaType: gz, data: gzipSync(top) },
      ],
    });
    pulled = `${registry.host}/fuse:v1`;
    d = await startDaemon({ args: ['--storage-driver', 'fuse-overlayfs'] });
    snapshots = join(d.dataRoot, 'fuse-overlayfs', 'snapshots');
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await registry?.cleanup();
  });

  test('the daemon reports the driver and the image is unpacked into its snapshotter, not overlayfs', async () => {
    const info = await d.docker(['info', '--format', '{{.Driver}}']);
    assert.equal(info.stdout.trim(), 'fuse-overlayfs', info.stderr);
    assert.equal(readdirSync(snapshots).length, 1, 'the busybox layer');
    const overlay = join(d.dataRoot, 'containerd', 'io.containerd.snapshotter.v1.overlayfs', 'snapshots');
    assert.deepEqual(existsSync(overlay) ? readdirSync(overlay) : [], []);
    assert.match(
      readFileSync(join(d.execRoot, 'containerd', 'containerd.toml'), 'utf8'),
      /\[proxy_plugins\."fuse-overlayfs"\]\n {2}type = "snapshot"/,
    );
  });

  test('run on a FUSE root file system, write and delete, docker diff, commit, run the commit, export', async () => {
    const run = await d.docker([
      'run',
      '-d',
      '--name',
      'writer',
      'busybox',
      'sh',
      '-c',
      'echo data > /written && rm /bin/vi && sleep 1000',
    ]);
    assert.equal(run.code, 0, run.stderr);
    await until('the file is written', async () =>
      (await d.docker(['exec', 'writer', 'cat', '/written'])).stdout === 'data\n' ? true : undefined,
    );
    const mounts = fuseMountsUnder(d.dir);
    assert.ok(fuseServersOf(d.dir).length > 0, 'a fuse-overlayfs process serves it');
    // The daemon's own mount under the container's directory, and the task's bind of it.
    const id = run.stdout.trim();
    assert.ok(mounts.includes(join(d.dataRoot, 'containers', id, 'mounts', 'rootfs')), `the daemon's FUSE mount: ${mounts.join(' ')}`);
    assert.ok(
      mounts.some((m) => m.startsWith(d.execRoot) && m.includes(id) && m.endsWith('/rootfs')),
      `the task's rootfs is the same fuse-overlayfs file system: ${mounts.join(' ')}`,
    );

    const diff = await d.docker(['diff', 'writer']);
    assert.equal(diff.code, 0, diff.stderr);
    assert.deepEqual(diff.stdout.trim().split('\n').sort(), ['A /written', 'C /bin', 'D /bin/vi']);

    const commit = await d.docker(['commit', 'writer', 'fuse-committed']);
    assert.equal(commit.code, 0, commit.stderr);
    const again = await d.docker([
      'run',
      '--rm',
      'fuse-committed',
      'sh',
      '-c',
      'cat /written; test -e /bin/vi && echo vi-back || echo vi-gone',
    ]);
    assert.equal(again.code, 0, again.stderr);
    assert.equal(again.stdout, 'data\nvi-gone\n');
    const hist = await d.docker(['history', '-q', 'fuse-committed']);
    assert.equal(hist.stdout.trim().split('\n').length, 2);

    // docker cp into the running container's root (through /proc/<pid>/root) and out of it.
    const src = join(d.dir, 'cp-src.txt');
    writeFileSync(src, 'copied-in\n');
    const cpIn = await d.docker(['cp', src, 'writer:/copied.txt']);
    assert.equal(cpIn.code, 0, cpIn.stderr);
    assert.equal((await d.docker(['exec', 'writer', 'cat', '/copied.txt'])).stdout, 'copied-in\n');
    const cpOut = await d.docker(['cp', 'writer:/written', join(d.dir, 'cp-out.txt')]);
    assert.equal(cpOut.code, 0, cpOut.stderr);
    assert.equal(readFileSync(join(d.dir, 'cp-out.txt'), 'utf8'), 'data\n');

    const exported = await d.docker(['export', 'writer'], { timeoutMs: 60_000 });
    assert.equal(exported.code, 0, exported.stderr);
    assert.ok(exported.stdout.includes('written'), 'the export holds the written file');

    // Sizes come from the snapshotter's usage: the container's own layer holds its 5-byte file.
    const ps = await d.docker(['ps', '-s', '--filter', 'name=writer', '--format', '{{.Size}}']);
    assert.match(ps.stdout, /^\d+(\.\d+)?k?B \(virtual \d+(\.\d+)?[kM]B\)$/m);
    const df = await d.docker(['system', 'df', '--format', '{{.Type}} {{.TotalCount}}']);
    assert.match(df.stdout, /^Images 2$/m);
    assert.match(df.stdout, /^Containers 1$/m);
  });

  test('docker diff lists what dockerd’s fuse-overlayfs driver lists (its naive diff), never fuse-overlayfs’s own markers', async () => {
    const r = await d.docker([
      'run',
      '--name',
      'differ',
      'busybox',
      'sh',
      '-c',
      'rm -rf /home && mkdir /home && touch /home/x; mv /var /var2; chmod 600 /etc/passwd; ln -s /bin/sh /lnk; rm /bin/vi',
    ]);
    assert.equal(r.code, 0, r.stderr);
    const diff = await d.docker(['diff', 'differ']);
    assert.equal(diff.code, 0, diff.stderr);
    // An opaque directory (/home) is kept by fuse-overlayfs with .wh..wh..opq and .wh..opq entries
    // in the upper directory; a parent of any change is a change, as in dockerd's naive diff.
    assert.deepEqual(diff.stdout.trim().split('\n').sort(), [
      'A /home/x',
      'A /lnk',
      'A /var2',
      'C /bin',
      'C /etc',
      'C /etc/passwd',
      'C /home',
      'D /bin/vi',
      'D /var',
    ]);
    assert.equal((await d.docker(['rm', 'differ'])).code, 0);
  });

  test('restart: a clean stop and start keeps containers and layers; after kill -9 the adopted containerd reaches the new snapshotter', async () => {
    const run = await d.docker([
      'run',
      '-d',
      '--restart',
      'always',
      '--name',
      'keep',
      'busybox',
      'sh',
      '-c',
      'echo kept >> /log; sleep 1000',
    ]);
    assert.equal(run.code, 0, run.stderr);
    await until('keep is up', async () => ((await d.docker(['exec', 'keep', 'cat', '/log'])).stdout === 'kept\n' ? true : undefined));

    await d.stop();
    assert.deepEqual(fuseMountsUnder(d.dir), [], 'a clean stop leaves no FUSE mount behind');
    assert.deepEqual(await until('the FUSE servers to exit', () => (fuseServersOf(d.dir).length ? undefined : [])), []);
    await d.restart();
    await until('keep runs again (restart policy)', async () =>
      (await d.docker(['inspect', '-f', '{{.State.Running}}', 'keep'])).stdout.trim() === 'true' ? true : undefined,
    );
    const log = await d.docker(['exec', 'keep', 'cat', '/log']);
    assert.equal(log.stdout, 'kept\nkept\n', 'its layer survived the restart: one line per start');

    await d.kill9();
    await d.restart();
    // Without live-restore the new daemon stops what the killed one left running, and the restart
    // policy starts it again: its snapshot's mounts come from the new daemon's server, through the
    // proxy of the containerd it adopted.
    await until('keep runs a third time', async () =>
      (await d.docker(['exec', 'keep', 'cat', '/log'])).stdout === 'kept\nkept\nkept\n' ? true : undefined,
    );
    // New snapshots too.
    const fresh = await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'echo new > /n && cat /n']);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, 'new\n');
    const c2 = await d.docker(['commit', 'keep', 'fuse-after-kill']);
    assert.equal(c2.code, 0, c2.stderr);
  });

  test('pull unpacks through the diff service onto fuse-overlayfs mounts, whiteouts included', async () => {
    const pull = await d.docker(['pull', pulled]);
    assert.equal(pull.code, 0, pull.stderr);
    // The new layer is a directory of the snapshotter, its deletion an overlay whiteout there.
    const layer = readdirSync(snapshots).find((id) => existsSync(join(snapshots, id, 'fs', 'extra')));
    assert.ok(layer, 'the pulled layer is in the fuse-overlayfs snapshotter');
    const wh = lstatSync(join(snapshots, layer, 'fs', 'bin', 'vi'));
    assert.ok(wh.isCharacterDevice() && wh.rdev === 0, 'bin/vi is a whiteout');
    const run = await d.docker(['run', '--rm', pulled, 'sh', '-c', 'cat /extra; test -e /bin/vi && echo vi-there || echo vi-gone']);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.stdout, 'pulled\nvi-gone\n');
  });

  test('a multi-stage build: RUN steps on FUSE mounts, COPY --from another stage, a deletion', async () => {
    const ctx = join(d.dir, 'ctx');
    mkdirSync(ctx);
    writeFileSync(
      join(ctx, 'Dockerfile'),
      'FROM busybox AS first\nRUN echo one > /one && mkdir /d && echo x > /d/x\n' +
        'FROM busybox\nCOPY --from=first /one /copied\nRUN rm -rf /root && cat /copied\n',
    );
    const build = await d.docker(['build', '-q', '-t', 'fuse-built', ctx], { env: { DOCKER_BUILDKIT: '0' }, timeoutMs: 120_000 });
    assert.equal(build.code, 0, build.stderr);
    const run = await d.docker([
      'run',
      '--rm',
      'fuse-built',
      'sh',
      '-c',
      'cat /copied; test -e /root && echo root-there || echo root-gone; test -e /d || echo no-d',
    ]);
    assert.equal(run.stdout, 'one\nroot-gone\nno-d\n', run.stderr);
  });

  // The shim's own FUSE mount (mount.fuse3) loses its child to the shim's reaper (ECHILD) depending on
  // load, so this cannot catch that every time; the mount check of the run test above can.
  test('twenty runs in a row all start', async () => {
    for (let i = 0; i < 20; i++) {
      const r = await d.docker(['run', '--rm', 'busybox', 'true']);
      assert.equal(r.code, 0, `run ${i}: ${r.stderr}`);
    }
  });

  test('removing containers and images removes their snapshots (containerd’s GC through the proxy)', async () => {
    const rm = await d.docker(['rm', '-f', 'writer', 'keep']);
    assert.equal(rm.code, 0, rm.stderr);
    const rmi = await d.docker(['rmi', 'fuse-committed', 'fuse-after-kill', 'fuse-built', 'busybox', pulled]);
    assert.equal(rmi.code, 0, rmi.stderr);
    // The build's intermediate images are kept by its cache.
    const prune = await d.docker(['builder', 'prune', '-af']);
    assert.equal(prune.code, 0, prune.stderr);
    await d.docker(['image', 'prune', '-af']);
    assert.equal((await d.docker(['images', '-q'])).stdout.trim(), '');
    await until('every snapshot is gone', async () => (readdirSync(snapshots).length === 0 ? true : undefined), 30_000).catch((err) => {
      throw new Error(`${(err as Error).message}: left ${readdirSync(snapshots).join(' ')}`);
    });
    assert.deepEqual(fuseMountsUnder(d.dir), []);
  });
});

describe('storage driver fuse-overlayfs with live-restore: kill -9', { skip }, () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon({ args: ['--storage-driver', 'fuse-overlayfs', '--live-restore'] });
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('the container keeps running on its FUSE mount, and the first run after the restart goes through', async () => {
    const run = await d.docker(['run', '-d', '--name', 'keep', 'busybox', 'sh', '-c', 'echo before > /f; sleep 1000']);
    assert.equal(run.code, 0, run.stderr);
    await until('keep wrote its file', async () =>
      (await d.docker(['exec', 'keep', 'cat', '/f'])).stdout === 'before\n' ? true : undefined,
    );
    await d.kill9();
    await d.restart();
    // No retry: containerd's connection to the dead daemon's snapshotter was replaced during start-up.
    const fresh = await d.docker(['run', '--rm', 'busybox', 'echo', 'fresh']);
    assert.equal(fresh.code, 0, fresh.stderr);
    assert.equal(fresh.stdout, 'fresh\n');
    const exec = await d.docker(['exec', 'keep', 'sh', '-c', 'cat /f; echo after >> /f']);
    assert.equal(exec.stdout, 'before\n', exec.stderr);
    const diff = await d.docker(['diff', 'keep']);
    assert.equal(diff.stdout.trim(), 'A /f', diff.stderr);
  });
});
