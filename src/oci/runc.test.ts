// Real containers: bundles made by buildSpec run directly with runc (no containerd), with a busybox
// rootfs. Needs root, /usr/sbin/runc and busybox-static (/usr/bin/busybox).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerConfig, HostConfig } from '../types/container-api.ts';
import { ALL_CAPABILITIES, capabilityMask, DEFAULT_CAPABILITIES, readOwnCapabilities } from './caps.ts';
import { readDaemonHardLimits } from './rlimits.ts';
import { buildSpec, type SpecInput } from './spec.ts';
import { serializeSpec } from './spec-types.ts';
import { resolveUser } from './user.ts';

const RUNC = '/usr/sbin/runc';
const BUSYBOX = '/usr/bin/busybox';
const APPLETS = ['sh', 'echo', 'cat', 'grep', 'unshare', 'true', 'id', 'wc', 'hostname'];
const CGROUP_PARENT = `/engine-oci-test-${process.pid}`;
const missing = !existsSync(RUNC)
  ? `${RUNC} not installed`
  : !existsSync(BUSYBOX)
    ? `${BUSYBOX} not installed (busybox-static)`
    : process.getuid?.() !== 0
      ? 'needs root'
      : undefined;

let work: string;
let runs = 0;

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

function run(
  script: string,
  hostConfig: HostConfig = {},
  opts: { config?: ContainerConfig; user?: string; available?: string[] } = {},
): Run {
  const id = `engine-oci-test-${process.pid}-${++runs}`;
  const bundle = join(work, id);
  const rootfs = join(bundle, 'rootfs');
  mkdirSync(join(rootfs, 'bin'), { recursive: true });
  mkdirSync(join(rootfs, 'etc'));
  copyFileSync(BUSYBOX, join(rootfs, 'bin/busybox'));
  for (const a of APPLETS) symlinkSync('busybox', join(rootfs, 'bin', a));
  writeFileSync(join(rootfs, 'etc/passwd'), 'root:x:0:0:root:/root:/bin/sh\nuser:x:1000:1000::/home/user:/bin/sh\n');
  writeFileSync(join(rootfs, 'etc/group'), 'root:x:0:\nuser:x:1000:\nextra:x:2000:user\n');
  writeFileSync(join(bundle, 'hosts'), '127.0.0.1\tlocalhost\n');
  writeFileSync(join(bundle, 'resolv.conf'), 'nameserver 127.0.0.1\n');
  writeFileSync(join(bundle, 'hostname'), 'testhost\n');

  const config: ContainerConfig = { Hostname: 'testhost', ...opts.config };
  const input: SpecInput = {
    id,
    config,
    hostConfig: { CgroupParent: CGROUP_PARENT, ...hostConfig },
    args: ['/bin/sh', '-c', script],
    user: resolveUser(rootfs, opts.user ?? config.User, hostConfig.GroupAdd),
    daemon: {
      seccompProfile: 'builtin',
      noNewPrivileges: false,
      defaultUlimits: [],
      defaultShmSize: 64 * 1024 * 1024,
      cgroupParent: '',
      cgroupDriver: 'cgroupfs',
      cgroupVersion: 1,
      defaultCgroupnsMode: 'private',
      defaultIpcMode: 'private',
      initPath: '',
      init: false,
      availableCapabilities: opts.available ?? readOwnCapabilities(),
    },
    files: { hostsPath: join(bundle, 'hosts'), resolvConfPath: join(bundle, 'resolv.conf'), hostnamePath: join(bundle, 'hostname') },
    mounts: [],
  };
  writeFileSync(join(bundle, 'config.json'), serializeSpec(buildSpec(input)));
  const r = spawnSync(RUNC, ['--root', join(work, 'state'), 'run', '--bundle', bundle, id], { encoding: 'utf8', timeout: 30_000 });
  spawnSync(RUNC, ['--root', join(work, 'state'), 'delete', '--force', id], { encoding: 'utf8' });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** "CapEff" → hex mask from `grep Cap /proc/self/status` output. */
function capLine(out: string, name: string): string {
  const m = new RegExp(`^${name}:\\s*([0-9a-f]+)$`, 'm').exec(out);
  assert.ok(m, `no ${name} in ${out}`);
  return m[1]!;
}

describe('runc runs what buildSpec builds', { skip: missing }, () => {
  before(() => {
    work = mkdtempSync(join(tmpdir(), 'engine-oci-runc-'));
  });
  after(() => {
    rmSync(work, { recursive: true, force: true });
    // runc removes the container cgroups; the shared parent is ours to remove.
    for (const hierarchy of readdirSync('/sys/fs/cgroup')) {
      try {
        rmdirSync(join('/sys/fs/cgroup', hierarchy, CGROUP_PARENT));
      } catch {
        // not created in this hierarchy
      }
    }
  });

  it('echo hi', () => {
    const r = run('echo hi');
    assert.equal(r.stderr, '');
    assert.equal(r.status, 0);
    assert.equal(r.stdout, 'hi\n');
  });

  it('the default seccomp profile refuses a user namespace; unconfined allows it', () => {
    const confined = run('unshare -U true');
    assert.notEqual(confined.status, 0);
    assert.match(confined.stderr, /Operation not permitted/);
    const unconfined = run('unshare -U true && echo ok', { SecurityOpt: ['seccomp=unconfined'] });
    assert.equal(unconfined.status, 0, unconfined.stderr);
    assert.equal(unconfined.stdout, 'ok\n');
  });

  it('root gets exactly the default capabilities', () => {
    const r = run('grep Cap /proc/self/status');
    assert.equal(r.status, 0, r.stderr);
    const def = capabilityMask(DEFAULT_CAPABILITIES);
    assert.equal(def, '00000000a80425fb');
    assert.equal(capLine(r.stdout, 'CapEff'), def);
    assert.equal(capLine(r.stdout, 'CapPrm'), def);
    assert.equal(capLine(r.stdout, 'CapBnd'), def);
    assert.equal(capLine(r.stdout, 'CapInh'), '0000000000000000');
    assert.equal(capLine(r.stdout, 'CapAmb'), '0000000000000000');
  });

  it('a non-root user has no effective capabilities, its ids and groups', () => {
    const r = run('grep Cap /proc/self/status; id', {}, { user: 'user' });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(capLine(r.stdout, 'CapEff'), '0000000000000000');
    assert.equal(capLine(r.stdout, 'CapBnd'), capabilityMask(DEFAULT_CAPABILITIES));
    assert.match(r.stdout, /uid=1000\(user\) gid=1000\(user\) groups=1000\(user\),2000\(extra\)/);
  });

  it('privileged gets every capability the daemon holds (and would fail with more)', () => {
    const own = readOwnCapabilities();
    const r = run('grep CapEff /proc/self/status', { Privileged: true });
    assert.equal(r.status, 0, r.stderr);
    assert.equal(capLine(r.stdout, 'CapEff'), capabilityMask(own));
    if (!own.includes('CAP_SYS_RESOURCE')) {
      // The host quirk the intersection exists for: runc cannot grant what it does not hold.
      const tooMany = run('true', { Privileged: true }, { available: [...ALL_CAPABILITIES] });
      assert.notEqual(tooMany.status, 0);
      assert.match(tooMany.stderr, /apply caps: operation not permitted/);
    }
  });

  it('rlimits are inherited without ulimits and set with them', () => {
    const hard = readDaemonHardLimits().nofile!;
    const inherited = run('ulimit -Hn');
    assert.equal(inherited.status, 0, inherited.stderr);
    assert.equal(inherited.stdout.trim(), hard.toString());
    const set = run('ulimit -Sn; ulimit -Hn', { Ulimits: [{ Name: 'nofile', Soft: 512, Hard: 1024 }] });
    assert.equal(set.status, 0, set.stderr);
    assert.equal(set.stdout, '512\n1024\n');
  });

  it('masked and read-only paths, hostname, resources', () => {
    const r = run(
      'wc -c < /proc/timer_list; (echo 1 > /proc/sys/kernel/ns_last_pid) 2>/dev/null || echo ro; hostname; ' +
        'cat /sys/fs/cgroup/memory/memory.limit_in_bytes /sys/fs/cgroup/pids/pids.max /sys/fs/cgroup/cpu/cpu.cfs_quota_us',
      { Memory: 64 * 1024 * 1024, PidsLimit: 50, NanoCpus: 500_000_000 },
    );
    assert.equal(r.status, 0, r.stderr);
    assert.equal(r.stdout, `0\nro\ntesthost\n${64 * 1024 * 1024}\n50\n50000\n`);
  });
});
