// The fuse-overlayfs storage driver in rootless mode: an unprivileged test user starts bin/engined
// (bin/engined-rootless, rootlesskit) with --storage-driver fuse-overlayfs; the daemon's snapshotter
// and containerd's FUSE mounts run inside the user namespace. Run, write and delete, docker diff,
// commit and run the commit. (Where the kernel mounts no overlay in a user namespace, rootless mode
// picks this driver by itself; that choice is unit-tested in supervisor/snapshotter/rootless.test.ts.)
//
// Host state touched and restored: the user engine-rl-fuse (created with subordinate ranges, removed
// after), /dev/net/tun's mode when it is not 0666.
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { chmod, chown, mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { SupervisorClient } from '../../src/supervisor/client.ts';
import { findOnPath } from '../../src/supervisor/containerd-process.ts';
import { ensureBusyboxImage } from '../fixtures/busybox-image.ts';
import { ENGINED, httpOverUnix, run } from '../helpers/daemon.ts';
import { until } from '../helpers/until.ts';

const USER = 'engine-rl-fuse';
const HOST_PATH = `${process.env.PATH ?? ''}:/usr/sbin:/usr/bin:/sbin:/bin`;
const missing = ['rootlesskit', 'slirp4netns', 'newuidmap', 'fuse-overlayfs', 'mount.fuse3'].filter((c) => !findOnPath(c, HOST_PATH));
const skip = missing.length ? `missing ${missing.join(', ')}` : !existsSync('/dev/fuse') ? 'no /dev/fuse' : false;

const idOf = (name: string) => {
  const line = readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((l) => l.startsWith(`${name}:`));
  return line ? Number(line.split(':')[2]) : undefined;
};
const shellWord = (w: string) => `'${w.replaceAll("'", `'\\''`)}'`;

describe('rootless with the fuse-overlayfs storage driver', { skip }, () => {
  let dir: string;
  let uid: number;
  let createdUser = false;
  let tunMode: number | undefined;
  let daemon: ChildProcess | undefined;
  let output = '';
  const socket = () => join(dir, 'run', 'engine.sock');
  const asUser = (cmd: string[]) =>
    run('runuser', ['-u', USER, '--', 'env', `HOME=${dir}`, `DOCKER_HOST=unix://${socket()}`, `DOCKER_CONFIG=${join(dir, 'dc')}`, ...cmd], {
      timeoutMs: 120_000,
    });

  before(async () => {
    if (idOf(USER) === undefined) {
      const r = await run('useradd', ['--no-create-home', '--shell', '/bin/sh', USER]);
      assert.equal(r.code, 0, r.stderr);
      createdUser = true;
    }
    uid = idOf(USER)!;
    const tun = statSync('/dev/net/tun').mode & 0o777;
    if (tun !== 0o666) {
      tunMode = tun;
      await chmod('/dev/net/tun', 0o666);
    }
    dir = await mkdtemp(join(tmpdir(), 'engine-t-rlfuse-'));
    await chmod(dir, 0o755);
    await chown(dir, uid, uid);
    const env = { HOME: dir, XDG_RUNTIME_DIR: join(dir, 'run'), XDG_DATA_HOME: join(dir, 'data'), XDG_CONFIG_HOME: join(dir, 'config') };
    const exports = Object.entries(env).map(([k, v]) => `${k}=${shellWord(v)}`);
    daemon = spawn(
      'runuser',
      [
        '-l',
        USER,
        '-c',
        `cd ${shellWord(dir)} && export ${exports.join(' ')} && exec ${shellWord(ENGINED)} --storage-driver fuse-overlayfs`,
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    daemon.stdout!.on('data', (d) => (output += d));
    daemon.stderr!.on('data', (d) => (output += d));
    const ready = await until(
      'the rootless daemon to answer',
      async () => {
        if (daemon!.exitCode !== null) return 'exited';
        return (await httpOverUnix(socket(), 'GET', '/_ping', { timeoutMs: 2000 })).status === 200 ? 'ready' : undefined;
      },
      90_000,
      200,
    ).catch((err: Error) => err.message);
    assert.equal(ready, 'ready', `rootless daemon: ${ready}:\n${output}`);
    const client = new SupervisorClient(join(dir, 'run', 'engine', 'containerd', 'containerd.sock'), { namespace: 'engine' });
    try {
      await ensureBusyboxImage(client, { snapshotter: 'fuse-overlayfs' });
    } finally {
      client.close();
    }
  });

  after(async () => {
    const pid = Number(await readFile(join(dir, 'run', 'engine.pid'), 'utf8').catch(() => '0'));
    if (pid > 0) {
      try {
        process.kill(pid, 'SIGTERM');
      } catch {
        // already gone
      }
    }
    if (daemon && daemon.exitCode === null) {
      const exited = new Promise((r) => daemon!.once('exit', r));
      const timer = setTimeout(() => daemon!.kill('SIGKILL'), 30_000);
      await exited;
      clearTimeout(timer);
    }
    if (dir) await rm(dir, { recursive: true, force: true });
    if (tunMode !== undefined) await chmod('/dev/net/tun', tunMode);
    if (createdUser) {
      const r = await run('userdel', [USER]);
      if (r.code !== 0) console.error(`userdel ${USER}: ${r.stderr}`);
    }
  });

  test('the driver is served as the user, and its layers are the user’s', async () => {
    const info = (await httpOverUnix(socket(), 'GET', '/v1.51/info')).json();
    assert.equal(info.Driver, 'fuse-overlayfs');
    const snapshots = join(dir, 'data', 'engine', 'fuse-overlayfs', 'snapshots');
    assert.equal(statSync(snapshots).uid, uid);
  });

  test('run, write and delete, docker diff, commit, run the commit', async () => {
    const r = await asUser(['docker', 'run', '--name', 'c1', 'busybox', 'sh', '-c', 'echo hi > /f && rm /bin/vi && cat /f']);
    assert.equal(r.code, 0, `${r.stderr}\n${output}`);
    assert.equal(r.stdout, 'hi\n');
    const diff = await asUser(['docker', 'diff', 'c1']);
    assert.deepEqual(diff.stdout.trim().split('\n').sort(), ['A /f', 'C /bin', 'D /bin/vi'], diff.stderr);
    const commit = await asUser(['docker', 'commit', 'c1', 'rl-fuse']);
    assert.equal(commit.code, 0, commit.stderr);
    const again = await asUser(['docker', 'run', '--rm', 'rl-fuse', 'sh', '-c', 'cat /f; test -e /bin/vi || echo vi-gone']);
    assert.equal(again.stdout, 'hi\nvi-gone\n', again.stderr);
    assert.equal((await asUser(['docker', 'rm', 'c1'])).code, 0);
  });
});
