// The host side of the default sysctls: which of dockerd's default network sysctls a host takes,
// whether the daemon runs in a user namespace, and the per-CPU masked paths — on fake /proc and
// /sys trees.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { hostMaskedPaths, DEFAULT_MASKED_PATHS } from './spec.ts';
import { hostNetSysctls, runningInUserNamespace } from './sysctls.ts';

describe('default sysctls on this host', () => {
  const dir = mkdtempSync(join(tmpdir(), 'engine-sysctls-unit-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('runningInUserNamespace reads uid_map: the full identity range is the host', () => {
    const map = join(dir, 'uid_map');
    writeFileSync(map, '         0          0 4294967295\n');
    assert.equal(runningInUserNamespace(map), false);
    writeFileSync(map, '         0       1000          1\n         1     100000      65536\n');
    assert.equal(runningInUserNamespace(map), true);
    assert.equal(runningInUserNamespace(join(dir, 'missing')), false);
  });

  it('hostNetSysctls: each needs its /proc/sys file; ping_group_range not in a user namespace', () => {
    const proc = join(dir, 'proc-sys');
    mkdirSync(join(proc, 'net/ipv4'), { recursive: true });
    assert.deepEqual(hostNetSysctls(proc, false), { pingGroupRange: false, unprivilegedPortStart: false });
    writeFileSync(join(proc, 'net/ipv4/ping_group_range'), '1\t0\n');
    writeFileSync(join(proc, 'net/ipv4/ip_unprivileged_port_start'), '1024\n');
    assert.deepEqual(hostNetSysctls(proc, false), { pingGroupRange: true, unprivilegedPortStart: true });
    assert.deepEqual(hostNetSysctls(proc, true), { pingGroupRange: false, unprivilegedPortStart: true });
    // This host (kernel ≥ 4.11) has both.
    assert.equal(hostNetSysctls().unprivilegedPortStart, true);
  });

  it('hostMaskedPaths adds the thermal_throttle directory of each possible CPU that has one', () => {
    const sys = join(dir, 'cpu');
    mkdirSync(join(sys, 'cpu0/thermal_throttle'), { recursive: true });
    mkdirSync(join(sys, 'cpu2/thermal_throttle'), { recursive: true });
    writeFileSync(join(sys, 'possible'), '0-1,2\n');
    assert.deepEqual(hostMaskedPaths(sys), [
      ...DEFAULT_MASKED_PATHS,
      join(sys, 'cpu0/thermal_throttle'),
      join(sys, 'cpu2/thermal_throttle'),
    ]);
    assert.deepEqual(hostMaskedPaths(join(dir, 'none')), [...DEFAULT_MASKED_PATHS]);
  });
});
