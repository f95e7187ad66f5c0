// The fuse-overlayfs storage driver in rootless mode: an unprivileged test user starts bin/engined
// (bin/engined-rootless, rootlesskit) with --storage-driver fuse-overlayfs; the daemon's snapshotter
// and containerd's FUSE mounts run inside the user namespace. Run, write and delete, docker diff,
// commit and run the commit. (Where the kernel mounts no overlay in a user namespace, rootless mode
// picks this driver by itself; that choice is unit-tested in supervisor/snapshotter/rootless.test.ts.)
//
// Host state touched and restored: the user engine-rl-fuse (created with subordinate ranges, removed
// after), /dev/net/tun's mode when it is not 0666.
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import { httpOverUnix } from '../helpers/daemon.ts';
import { RootlessDaemon } from '../helpers/rootless-daemon.ts';

const USER = 'engine-rl-fuse';
const HOST_PATH = `${process.env.PATH ?? ''}:/usr/sbin:/usr/bin:/sbin:/bin`;
const missing = ['rootlesskit', 'slirp4netns', 'newuidmap', 'fuse-overlayfs', 'mount.fuse3'].filter((c) => !findOnPath(c, HOST_PATH));
const skip = missing.length ? `missing ${missing.join(', ')}` : !existsSync('/dev/fuse') ? 'no /dev/fuse' : false;

describe('rootless with the fuse-overlayfs storage driver', { skip }, () => {
  const rl = new RootlessDaemon(USER, 'engine-t-rlfuse-');

  before(async () => {
    await rl.prepare();
    await rl.start(['--storage-driver', 'fuse-overlayfs'], { snapshotter: 'fuse-overlayfs' });
  });

  after(() => rl.cleanup());

  test('the driver is served as the user, and its layers are the user’s', async () => {
    const info = (await httpOverUnix(rl.socket, 'GET', '/v1.51/info')).json();
    assert.equal(info.Driver, 'fuse-overlayfs');
    const snapshots = join(rl.dir, 'data', 'engine', 'fuse-overlayfs', 'snapshots');
    assert.equal(statSync(snapshots).uid, rl.uid);
  });

  test('run, write and delete, docker diff, commit, run the commit', async () => {
    const r = await rl.asUser(['docker', 'run', '--name', 'c1', 'busybox', 'sh', '-c', 'echo hi > /f && rm /bin/vi && cat /f']);
    assert.equal(r.code, 0, `${r.stderr}\n${rl.output}`);
    assert.equal(r.stdout, 'hi\n');
    const diff = await rl.asUser(['docker', 'diff', 'c1']);
    assert.deepEqual(diff.stdout.trim().split('\n').sort(), ['A /f', 'C /bin', 'D /bin/vi'], diff.stderr);
    const commit = await rl.asUser(['docker', 'commit', 'c1', 'rl-fuse']);
    assert.equal(commit.code, 0, commit.stderr);
    const again = await rl.asUser(['docker', 'run', '--rm', 'rl-fuse', 'sh', '-c', 'cat /f; test -e /bin/vi || echo vi-gone']);
    assert.equal(again.stdout, 'hi\nvi-gone\n', again.stderr);
    assert.equal((await rl.asUser(['docker', 'rm', 'c1'])).code, 0);
  });
});
