// Host-facing helpers: cgroup layout/driver, rlimit checks, capability masks, device numbers.

import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { capabilitiesFromMask, capabilityMask, DEFAULT_CAPABILITIES, readOwnCapabilities } from './caps.ts';
import { cgroupDriverDefault, cgroupsPath, detectCgroupLayout, resolveCgroupDriver } from './cgroups.ts';
import { deviceNumbers, parseDeviceCgroupRule, resolveDevice, resolveDeviceMappings, splitDevT } from './devices.ts';
import { checkUlimits, parseProcLimits, readDaemonHardLimits, RLIM_INFINITY } from './rlimits.ts';

describe('cgroups', () => {
  it('detects this host as hybrid (see host-quirks)', () => {
    assert.equal(detectCgroupLayout(), 'hybrid');
  });

  it('defaults to cgroupfs except on v2 with systemd', () => {
    assert.equal(cgroupDriverDefault('v1', true), 'cgroupfs');
    assert.equal(cgroupDriverDefault('hybrid', true), 'cgroupfs');
    assert.equal(cgroupDriverDefault('v2', false), 'cgroupfs');
    assert.equal(cgroupDriverDefault('v2', true), 'systemd');
  });

  it('native.cgroupdriver: explicit choice, errors for systemd without systemd and unknown drivers', () => {
    assert.equal(resolveCgroupDriver([], { layout: 'v2', systemd: true }), 'systemd');
    assert.equal(resolveCgroupDriver(['native.cgroupdriver=cgroupfs'], { layout: 'v2', systemd: true }), 'cgroupfs');
    assert.equal(resolveCgroupDriver(['Native.CgroupDriver=systemd'], { systemd: true }), 'systemd');
    assert.throws(
      () => resolveCgroupDriver(['native.cgroupdriver=systemd'], { systemd: false }),
      /systemd cgroup driver requested but systemd is not running/,
    );
    assert.throws(() => resolveCgroupDriver(['native.cgroupdriver=foo']), /native.cgroupdriver option foo not supported/);
    // This host has no systemd as PID 1.
    assert.throws(() => resolveCgroupDriver(['native.cgroupdriver=systemd']), /systemd is not running/);
  });

  it('cgroups paths', () => {
    assert.equal(cgroupsPath('cgroupfs', undefined, 'abc'), '/engine/abc');
    assert.equal(cgroupsPath('cgroupfs', 'relative/parent', 'abc'), 'relative/parent/abc');
    assert.equal(cgroupsPath('systemd', undefined, 'abc'), 'system.slice:engine:abc');
    assert.throws(() => cgroupsPath('systemd', '/engine', 'abc'), /xxx\.slice/);
  });
});

describe('rlimits', () => {
  const LIMITS = `Limit                     Soft Limit           Hard Limit           Units
Max cpu time              unlimited            unlimited            seconds
Max processes             96343                96343                processes
Max open files            1024                 20000                files
`;

  it('parses /proc/<pid>/limits', () => {
    assert.deepEqual(parseProcLimits(LIMITS), { cpu: RLIM_INFINITY, nproc: 96343n, nofile: 20000n });
    assert.ok(readDaemonHardLimits().nofile! > 0n);
  });

  it('refuses hard limits above the daemon’s own unless it can raise them', () => {
    const hard = parseProcLimits(LIMITS);
    checkUlimits(
      [
        { Name: 'nofile', Soft: 1024, Hard: 20000 },
        { Name: 'cpu', Soft: -1, Hard: -1 },
      ],
      hard,
    );
    assert.throws(() => checkUlimits([{ Name: 'nofile', Soft: 1024, Hard: 30000 }], hard), {
      message:
        "ulimit nofile: hard limit 30000 is above the daemon's own hard limit 20000, and the daemon lacks CAP_SYS_RESOURCE to raise it",
    });
    assert.throws(() => checkUlimits([{ Name: 'nproc', Soft: 1, Hard: -1 }], hard), /hard limit unlimited is above/);
    checkUlimits([{ Name: 'nofile', Soft: 1024, Hard: 30000 }], hard, true);
  });
});

describe('capability masks', () => {
  it('round-trips Docker’s default set to the well-known mask', () => {
    assert.equal(capabilityMask(DEFAULT_CAPABILITIES), '00000000a80425fb');
    assert.deepEqual(new Set(capabilitiesFromMask('00000000a80425fb')), new Set(DEFAULT_CAPABILITIES));
  });

  it('reads this process’s capabilities (no CAP_SYS_RESOURCE here)', () => {
    assert.ok(!readOwnCapabilities().includes('CAP_SYS_RESOURCE'));
    assert.deepEqual(readOwnCapabilities('CapEff:\t0000000000000001\n'), ['CAP_CHOWN']);
  });
});

describe('devices', () => {
  it('splits dev_t', () => {
    assert.deepEqual(splitDevT(0x103n), { major: 1, minor: 3 });
    assert.deepEqual(splitDevT((259n << 8n) | 5n), { major: 259, minor: 5 });
  });

  it('resolves host device nodes', () => {
    assert.deepEqual(deviceNumbers('/dev/null'), { major: 1, minor: 3, type: 'c' });
    const d = resolveDevice('/dev/null', '/dev/mynull', 'rw');
    assert.equal(d.path, '/dev/mynull');
    assert.equal(d.type, 'c');
    assert.equal(d.major, 1);
    assert.equal(d.minor, 3);
    assert.equal(d.permissions, 'rw');
    assert.throws(
      () => resolveDevice('/etc/hostname'),
      /error gathering device information while adding custom device "\/etc\/hostname": not a device node/,
    );
    assert.throws(() => resolveDevice('/dev/does-not-exist'), /error gathering device information/);
    const mapped = resolveDeviceMappings([{ PathOnHost: '/dev/zero' }]);
    assert.deepEqual([mapped[0]!.path, mapped[0]!.permissions, mapped[0]!.minor], ['/dev/zero', 'rwm', 5]);
  });

  it('parses device cgroup rules', () => {
    assert.deepEqual(parseDeviceCgroupRule('c 13:* rwm'), { allow: true, type: 'c', major: 13, access: 'rwm' });
    assert.deepEqual(parseDeviceCgroupRule('b *:* m'), { allow: true, type: 'b', access: 'm' });
    assert.throws(() => parseDeviceCgroupRule('x 1:1 r'), /invalid device cgroup format/);
  });
});
