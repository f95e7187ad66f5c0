import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { HostConfig } from '../types/container-api.ts';
import { ALL_CAPABILITIES, DEFAULT_CAPABILITIES } from './caps.ts';
import { buildSpec, DEFAULT_MASKED_PATHS, DEFAULT_READONLY_PATHS, type SpecInput } from './spec.ts';
import { serializeSpec } from './spec-types.ts';
import { RLIM_INFINITY } from './rlimits.ts';

const ID = 'c0ffee'.padEnd(64, '0');

function input(hostConfig: HostConfig = {}, over: Partial<SpecInput> = {}): SpecInput {
  return {
    id: ID,
    config: { Hostname: 'c0ffee000000', Env: ['FOO=bar'] },
    hostConfig,
    args: ['/bin/sh', '-c', 'echo hi'],
    user: { uid: 0, gid: 0, additionalGids: [] },
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
      initPath: '/usr/bin/tini',
      init: false,
      kernel: '6.1.0',
      arch: 'amd64',
    },
    files: { hostsPath: '/data/c/hosts', resolvConfPath: '/data/c/resolv.conf', hostnamePath: '/data/c/hostname' },
    mounts: [],
    ...over,
  };
}

const dests = (spec: ReturnType<typeof buildSpec>) => spec.mounts.map((m) => m.destination);
const mount = (spec: ReturnType<typeof buildSpec>, dest: string) => spec.mounts.find((m) => m.destination === dest);
const nsTypes = (spec: ReturnType<typeof buildSpec>) => spec.linux.namespaces.map((n) => n.type).sort();

describe('buildSpec: a plain container', () => {
  const spec = buildSpec(input());

  it('has the process Docker would run', () => {
    assert.equal(spec.ociVersion, '1.0.2');
    assert.deepEqual(spec.process.args, ['/bin/sh', '-c', 'echo hi']);
    assert.equal(spec.process.terminal, false);
    assert.equal(spec.process.cwd, '/');
    assert.deepEqual(spec.process.user, { uid: 0, gid: 0, additionalGids: [] });
    assert.deepEqual(spec.process.env, [
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      'HOSTNAME=c0ffee000000',
      'FOO=bar',
    ]);
    assert.equal(spec.process.noNewPrivileges, undefined);
    assert.equal(spec.process.oomScoreAdj, undefined);
  });

  it('gets the default 14 capabilities in bounding, effective and permitted', () => {
    const caps = spec.process.capabilities!;
    assert.equal(caps.bounding!.length, 14);
    assert.deepEqual(new Set(caps.bounding), new Set(DEFAULT_CAPABILITIES));
    assert.deepEqual(caps.effective, caps.bounding);
    assert.deepEqual(caps.permitted, caps.bounding);
    assert.equal(caps.inheritable, undefined);
  });

  it('emits no rlimits, so limits are inherited from the daemon', () => {
    assert.equal(spec.process.rlimits, undefined);
  });

  it('has root, hostname and cgroups path', () => {
    assert.deepEqual(spec.root, { path: 'rootfs', readonly: false });
    assert.equal(spec.hostname, 'c0ffee000000');
    assert.equal(spec.linux.cgroupsPath, `/engine/${ID}`);
  });

  it('creates its own namespaces, including cgroup when private', () => {
    assert.deepEqual(nsTypes(spec), ['cgroup', 'ipc', 'mount', 'network', 'pid', 'uts']);
    assert.ok(spec.linux.namespaces.every((n) => n.path === undefined));
  });

  it('masks and read-only-mounts the default paths', () => {
    assert.deepEqual(spec.linux.maskedPaths, [...DEFAULT_MASKED_PATHS]);
    assert.deepEqual(spec.linux.readonlyPaths, [...DEFAULT_READONLY_PATHS]);
    assert.ok(spec.linux.maskedPaths!.includes('/proc/kcore'));
  });

  it('mounts the kernel filesystems and the network files', () => {
    assert.deepEqual(dests(spec), [
      '/proc',
      '/dev',
      '/sys',
      '/dev/pts',
      '/dev/mqueue',
      '/dev/shm',
      '/etc/resolv.conf',
      '/etc/hostname',
      '/etc/hosts',
      '/sys/fs/cgroup',
    ]);
    assert.deepEqual(mount(spec, '/sys')!.options, ['nosuid', 'noexec', 'nodev', 'ro']);
    assert.ok(mount(spec, '/sys/fs/cgroup')!.options!.includes('ro'));
    assert.deepEqual(mount(spec, '/dev/shm'), {
      destination: '/dev/shm',
      type: 'tmpfs',
      source: 'shm',
      options: ['nosuid', 'noexec', 'nodev', 'mode=1777', 'size=67108864'],
    });
    assert.deepEqual(mount(spec, '/etc/hosts'), {
      destination: '/etc/hosts',
      type: 'bind',
      source: '/data/c/hosts',
      options: ['rbind', 'rprivate'],
    });
  });

  it('allows only the default devices', () => {
    const rules = spec.linux.resources!.devices!;
    assert.deepEqual(rules[0], { allow: false, access: 'rwm' });
    assert.ok(rules.some((r) => r.allow && r.type === 'c' && r.major === 1 && r.minor === 3));
    assert.ok(!rules.some((r) => r.allow && r.major === 10 && r.minor === 229), 'fuse stays denied');
    assert.equal(spec.linux.devices, undefined);
    assert.equal(spec.linux.resources!.memory, undefined);
    assert.equal(spec.linux.resources!.cpu, undefined);
  });

  it('has the built-in seccomp profile', () => {
    const sc = spec.linux.seccomp!;
    assert.equal(sc.defaultAction, 'SCMP_ACT_ERRNO');
    assert.deepEqual(sc.architectures, ['SCMP_ARCH_X86_64', 'SCMP_ARCH_X86', 'SCMP_ARCH_X32']);
    assert.ok(sc.syscalls!.some((s) => s.names.includes('read') && s.action === 'SCMP_ACT_ALLOW'));
  });

  it('serializes to JSON', () => {
    const parsed = JSON.parse(serializeSpec(spec));
    assert.equal(parsed.process.args[0], '/bin/sh');
  });
});

describe('buildSpec: process', () => {
  it('sets TERM and the console size with a TTY, and WorkingDir', () => {
    const spec = buildSpec(input({ ConsoleSize: [40, 120] }, { config: { Tty: true, WorkingDir: '/srv', Hostname: 'h' } }));
    assert.equal(spec.process.terminal, true);
    assert.ok(spec.process.env.includes('TERM=xterm'));
    assert.deepEqual(spec.process.consoleSize, { height: 40, width: 120 });
    assert.equal(spec.process.cwd, '/srv');
  });

  it('lets Env override PATH and remove variables named without "="', () => {
    const spec = buildSpec(input({}, { config: { Hostname: 'h', Env: ['PATH=/x', 'HOSTNAME', 'A=1'] } }));
    assert.deepEqual(spec.process.env, ['PATH=/x', 'A=1']);
  });

  it('prepends the init binary and mounts it read-only', () => {
    const spec = buildSpec(input({ Init: true }));
    assert.deepEqual(spec.process.args, ['/sbin/engine-init', '--', '/bin/sh', '-c', 'echo hi']);
    assert.deepEqual(mount(spec, '/sbin/engine-init'), {
      destination: '/sbin/engine-init',
      type: 'bind',
      source: '/usr/bin/tini',
      options: ['bind', 'ro'],
    });
    const daemonInit = input();
    daemonInit.daemon.init = true;
    assert.equal(buildSpec(daemonInit).process.args[0], '/sbin/engine-init');
    assert.equal(buildSpec({ ...daemonInit, hostConfig: { Init: false } }).process.args[0], '/bin/sh');
  });

  it('refuses an empty command', () => {
    assert.throws(() => buildSpec(input({}, { args: [] })), /No command specified/);
  });

  it('takes no-new-privileges from the daemon or SecurityOpt', () => {
    const d = input();
    d.daemon.noNewPrivileges = true;
    assert.equal(buildSpec(d).process.noNewPrivileges, true);
    assert.equal(buildSpec({ ...d, hostConfig: { SecurityOpt: ['no-new-privileges=false'] } }).process.noNewPrivileges, undefined);
    assert.equal(buildSpec(input({ SecurityOpt: ['no-new-privileges'] })).process.noNewPrivileges, true);
    assert.equal(buildSpec(input({ SecurityOpt: ['no-new-privileges:true'] })).process.noNewPrivileges, true);
  });

  it('accepts AppArmor and SELinux options without applying them, and warns', () => {
    const warnings: string[] = [];
    const spec = buildSpec(input({ SecurityOpt: ['apparmor=docker-default', 'label=type:svirt_t'] }), warnings);
    assert.equal(spec.process.apparmorProfile, undefined);
    assert.equal(spec.process.selinuxLabel, undefined);
    assert.equal(warnings.length, 2);
    assert.match(warnings[0]!, /AppArmor profile "docker-default" was not applied/);
    assert.match(warnings[1]!, /SELinux/);
  });

  it('writes only a non-zero OomScoreAdj', () => {
    assert.equal(buildSpec(input({ OomScoreAdj: 500 })).process.oomScoreAdj, 500);
    assert.equal(buildSpec(input({ OomScoreAdj: 0 })).process.oomScoreAdj, undefined);
  });
});

describe('buildSpec: capabilities', () => {
  const caps = (hc: HostConfig, over: Partial<SpecInput> = {}) => buildSpec(input(hc, over)).process.capabilities!;

  it('adds and drops, with or without the CAP_ prefix, in any case', () => {
    const c = caps({ CapAdd: ['net_admin', 'CAP_SYS_PTRACE'], CapDrop: ['CHOWN', 'cap_kill'] });
    assert.ok(c.bounding!.includes('CAP_NET_ADMIN'));
    assert.ok(c.bounding!.includes('CAP_SYS_PTRACE'));
    assert.ok(!c.bounding!.includes('CAP_CHOWN'));
    assert.ok(!c.bounding!.includes('CAP_KILL'));
    assert.equal(c.bounding!.length, 14);
  });

  it('CapDrop ALL leaves exactly CapAdd; CapAdd ALL gives everything but CapDrop', () => {
    assert.deepEqual(caps({ CapDrop: ['ALL'], CapAdd: ['NET_BIND_SERVICE'] }).bounding, ['CAP_NET_BIND_SERVICE']);
    const all = caps({ CapAdd: ['all'], CapDrop: ['SYS_ADMIN'] }).bounding!;
    assert.equal(all.length, ALL_CAPABILITIES.length - 1);
    assert.ok(!all.includes('CAP_SYS_ADMIN'));
  });

  it('privileged gets every capability the daemon holds', () => {
    assert.equal(caps({ Privileged: true }).bounding!.length, ALL_CAPABILITIES.length);
    const limited = input({ Privileged: true });
    limited.daemon.availableCapabilities = ALL_CAPABILITIES.filter((c) => c !== 'CAP_SYS_RESOURCE');
    const c = buildSpec(limited).process.capabilities!;
    assert.ok(!c.bounding!.includes('CAP_SYS_RESOURCE'));
    assert.ok(!c.permitted!.includes('CAP_SYS_RESOURCE'));
    assert.equal(c.bounding!.length, ALL_CAPABILITIES.length - 1);
  });

  it('a non-root user gets only the bounding set', () => {
    const c = caps({}, { user: { uid: 1000, gid: 1000, additionalGids: [] } });
    assert.equal(c.bounding!.length, 14);
    assert.equal(c.effective, undefined);
    assert.equal(c.permitted, undefined);
  });

  it('refuses an unknown capability', () => {
    assert.throws(() => caps({ CapAdd: ['CAP_FLY'] }), /unknown capability: "CAP_FLY"/);
  });
});

describe('buildSpec: rlimits', () => {
  it('uses default-ulimits, overridden per name by the container', () => {
    const i = input({ Ulimits: [{ Name: 'nofile', Soft: 1024, Hard: 2048 }] });
    i.daemon.defaultUlimits = [
      { Name: 'nofile', Soft: 100, Hard: 200 },
      { Name: 'nproc', Soft: 50, Hard: -1 },
    ];
    const r = buildSpec(i).process.rlimits!;
    assert.deepEqual(r, [
      { type: 'RLIMIT_NOFILE', soft: 1024n, hard: 2048n },
      { type: 'RLIMIT_NPROC', soft: 50n, hard: RLIM_INFINITY },
    ]);
    assert.match(serializeSpec(buildSpec(i)), /"hard":18446744073709551615/);
  });

  it('container Ulimits alone', () => {
    assert.deepEqual(buildSpec(input({ Ulimits: [{ Name: 'core', Soft: 0, Hard: 0 }] })).process.rlimits, [
      { type: 'RLIMIT_CORE', soft: 0n, hard: 0n },
    ]);
  });
});

describe('buildSpec: seccomp', () => {
  it('is absent when unconfined (daemon or SecurityOpt) and for privileged containers', () => {
    assert.equal(buildSpec(input({ SecurityOpt: ['seccomp=unconfined'] })).linux.seccomp, undefined);
    assert.equal(buildSpec(input({ Privileged: true })).linux.seccomp, undefined);
    const d = input();
    d.daemon.seccompProfile = 'unconfined';
    assert.equal(buildSpec(d).linux.seccomp, undefined);
    assert.ok(buildSpec({ ...d, hostConfig: { SecurityOpt: ['seccomp=builtin'] } }).linux.seccomp);
  });

  it('uses a profile passed as JSON in SecurityOpt', () => {
    const profile = { defaultAction: 'SCMP_ACT_ALLOW', syscalls: [{ names: ['mkdir'], action: 'SCMP_ACT_ERRNO' }] };
    const sc = buildSpec(input({ SecurityOpt: [`seccomp=${JSON.stringify(profile)}`] })).linux.seccomp!;
    assert.equal(sc.defaultAction, 'SCMP_ACT_ALLOW');
    assert.deepEqual(sc.syscalls, [{ names: ['mkdir'], action: 'SCMP_ACT_ERRNO' }]);
  });

  it('uses the daemon profile object', () => {
    const d = input();
    d.daemon.seccompProfile = { defaultAction: 'SCMP_ACT_LOG', syscalls: [] };
    assert.equal(buildSpec(d).linux.seccomp!.defaultAction, 'SCMP_ACT_LOG');
  });

  it('refuses an undecodable profile', () => {
    assert.throws(() => buildSpec(input({ SecurityOpt: ['seccomp={not json'] })), /Decoding seccomp profile failed/);
  });
});

describe('buildSpec: privileged', () => {
  const spec = buildSpec(
    input(
      { Privileged: true },
      { hostDevices: [{ path: '/dev/sda', type: 'b', major: 8, minor: 0, fileMode: 0o660, uid: 0, gid: 6, permissions: 'rwm' }] },
    ),
  );

  it('has no masked or read-only paths, rw /sys and cgroups, all devices', () => {
    assert.equal(spec.linux.maskedPaths, undefined);
    assert.equal(spec.linux.readonlyPaths, undefined);
    assert.ok(!mount(spec, '/sys')!.options!.includes('ro'));
    assert.ok(!mount(spec, '/sys/fs/cgroup')!.options!.includes('ro'));
    assert.deepEqual(spec.linux.resources!.devices, [{ allow: true, access: 'rwm' }]);
    assert.deepEqual(spec.linux.devices, [{ path: '/dev/sda', type: 'b', major: 8, minor: 0, fileMode: 0o660, uid: 0, gid: 6 }]);
  });

  it('shares the host cgroup namespace on cgroup v1 unless told otherwise', () => {
    assert.ok(!nsTypes(spec).includes('cgroup'));
    assert.ok(nsTypes(buildSpec(input({ Privileged: true, CgroupnsMode: 'private' }))).includes('cgroup'));
  });

  it('keeps masked paths overridable for unprivileged containers', () => {
    const s = buildSpec(input({ MaskedPaths: ['/proc/x'], ReadonlyPaths: [] }));
    assert.deepEqual(s.linux.maskedPaths, ['/proc/x']);
    assert.deepEqual(s.linux.readonlyPaths, []);
  });

  it('applies masked paths a privileged container sets itself (as dockerd)', () => {
    const s = buildSpec(input({ Privileged: true, MaskedPaths: ['/proc/kcore'] }));
    assert.deepEqual(s.linux.maskedPaths, ['/proc/kcore']);
    assert.equal(s.linux.readonlyPaths, undefined);
  });
});

describe('buildSpec: mounts', () => {
  it('orders parents before children and lets user mounts replace defaults', () => {
    const spec = buildSpec(
      input(
        { Tmpfs: { '/run': 'rw,exec,size=65536k', '/dev/shm': 'size=1m' } },
        {
          mounts: [
            { type: 'bind', source: '/host/a/b', destination: '/data/sub', options: ['ro'] },
            { type: 'bind', source: '/host/a', destination: '/data', options: ['rbind', 'rshared'] },
            { type: 'tmpfs', source: '', destination: '/data/sub/tmp', options: ['size=1m'] },
          ],
        },
      ),
    );
    const d = dests(spec);
    assert.ok(d.indexOf('/data') < d.indexOf('/data/sub'));
    assert.ok(d.indexOf('/data/sub') < d.indexOf('/data/sub/tmp'));
    for (let i = 1; i < d.length; i++) {
      const depth = (p: string) => p.split('/').length;
      assert.ok(depth(d[i - 1]!) <= depth(d[i]!), `${d[i - 1]} before ${d[i]}`);
    }
    assert.equal(d.filter((x) => x === '/dev/shm').length, 1);
    assert.deepEqual(mount(spec, '/dev/shm')!.options, ['noexec', 'nosuid', 'nodev', 'size=1m']);
    assert.deepEqual(mount(spec, '/run')!.options, ['nosuid', 'nodev', 'rw', 'exec', 'size=65536k']);
    assert.deepEqual(mount(spec, '/data/sub')!.options, ['rbind', 'ro', 'rprivate']);
    assert.deepEqual(mount(spec, '/data')!.options, ['rbind', 'rshared']);
    assert.equal(spec.linux.rootfsPropagation, 'rshared');
  });

  it('a user mount at /dev replaces every default under /dev', () => {
    const spec = buildSpec(input({}, { mounts: [{ type: 'bind', source: '/dev', destination: '/dev', options: [] }] }));
    assert.deepEqual(
      dests(spec).filter((x) => x.startsWith('/dev')),
      ['/dev'],
    );
  });

  it('a user bind at /etc/hosts replaces the daemon-written file', () => {
    const spec = buildSpec(input({}, { mounts: [{ type: 'bind', source: '/mine', destination: '/etc/hosts', options: [] }] }));
    assert.deepEqual(
      spec.mounts.filter((m) => m.destination === '/etc/hosts').map((m) => m.source),
      ['/mine'],
    );
  });

  it('read-only rootfs makes the network files read-only', () => {
    const spec = buildSpec(input({ ReadonlyRootfs: true }));
    assert.equal(spec.root.readonly, true);
    assert.ok(mount(spec, '/etc/resolv.conf')!.options!.includes('ro'));
  });

  it('/dev/shm follows the IPC mode and ShmSize', () => {
    assert.equal(mount(buildSpec(input({ IpcMode: 'none' })), '/dev/shm'), undefined);
    assert.ok(mount(buildSpec(input({ ShmSize: 1024 * 1024 })), '/dev/shm')!.options!.includes('size=1048576'));
    const shared = buildSpec(input({ IpcMode: 'shareable' }, { files: { shmPath: '/data/c/shm' } }));
    assert.deepEqual(mount(shared, '/dev/shm'), {
      destination: '/dev/shm',
      type: 'bind',
      source: '/data/c/shm',
      options: ['rbind', 'rprivate'],
    });
    assert.throws(() => buildSpec(input({ IpcMode: 'shareable' })), /needs the shared \/dev\/shm path/);
    const host = buildSpec(input({ IpcMode: 'host' }));
    assert.equal(mount(host, '/dev/shm')!.source, '/dev/shm');
    assert.equal(mount(host, '/dev/mqueue')!.type, 'bind');
  });
});

describe('buildSpec: resources', () => {
  const res = (hc: HostConfig) => buildSpec(input(hc)).linux.resources!;

  it('NanoCpus → quota/period of 100ms', () => {
    assert.deepEqual(res({ NanoCpus: 1_500_000_000 }).cpu, { period: 100000, quota: 150000 });
    assert.deepEqual(res({ NanoCpus: 10_000_000 }).cpu, { period: 100000, quota: 1000 });
  });

  it('CPU shares (clamped), period/quota, cpuset, realtime', () => {
    assert.deepEqual(
      res({ CpuShares: 1, CpuPeriod: 50000, CpuQuota: 25000, CpusetCpus: '0-1', CpusetMems: '0', CpuRealtimeRuntime: 950 }).cpu,
      {
        shares: 2,
        period: 50000,
        quota: 25000,
        cpus: '0-1',
        mems: '0',
        realtimeRuntime: 950,
      },
    );
    assert.equal(res({ CpuShares: 1_000_000 }).cpu!.shares, 262144);
  });

  it('Memory, MemorySwap (default twice the limit; -1 unlimited), reservation, swappiness, OOM killer', () => {
    const mb = 1024 * 1024;
    assert.deepEqual(res({ Memory: 64 * mb }).memory, { limit: 64 * mb, swap: 128 * mb });
    assert.deepEqual(
      res({ Memory: 64 * mb, MemorySwap: 100 * mb, MemoryReservation: 32 * mb, MemorySwappiness: 10, OomKillDisable: true }).memory,
      {
        limit: 64 * mb,
        swap: 100 * mb,
        reservation: 32 * mb,
        swappiness: 10,
        disableOOMKiller: true,
      },
    );
    assert.deepEqual(res({ Memory: 64 * mb, MemorySwap: -1 }).memory, { limit: 64 * mb, swap: -1 });
  });

  it('drops what cgroup v2 or a host without swap accounting cannot do, with warnings', () => {
    const i = input({ Memory: 8 << 20, MemorySwap: 16 << 20, MemorySwappiness: 5 });
    i.daemon.cgroupVersion = 2;
    i.daemon.swapLimit = false;
    const warnings: string[] = [];
    assert.deepEqual(buildSpec(i, warnings).linux.resources!.memory, { limit: 8 << 20 });
    assert.equal(warnings.length, 2);
  });

  it('pids limit: positive as is, 0 or negative unlimited, absent omitted', () => {
    assert.deepEqual(res({ PidsLimit: 100 }).pids, { limit: 100 });
    assert.deepEqual(res({ PidsLimit: 0 }).pids, { limit: -1 });
    assert.equal(res({}).pids, undefined);
  });

  it('blkio weight and throttling via resolved device numbers', () => {
    const spec = buildSpec(
      input(
        { BlkioWeight: 300, BlkioDeviceReadBps: [{ Path: '/dev/sda', Rate: 1000 }] },
        { blkioDevices: { '/dev/sda': { major: 8, minor: 0 } } },
      ),
    );
    assert.deepEqual(spec.linux.resources!.blockIO, { weight: 300, throttleReadBpsDevice: [{ major: 8, minor: 0, rate: 1000 }] });
    assert.throws(() => buildSpec(input({ BlkioDeviceReadBps: [{ Path: '/dev/sdz', Rate: 1 }] })), /could not be resolved/);
  });

  it('user devices and cgroup rules', () => {
    const spec = buildSpec(
      input(
        { DeviceCgroupRules: ['c 13:* rwm'] },
        {
          devices: [{ path: '/dev/mydev', type: 'c', major: 240, minor: 1, fileMode: 0o600, uid: 0, gid: 0, permissions: 'rw' }],
        },
      ),
    );
    assert.deepEqual(spec.linux.devices, [{ path: '/dev/mydev', type: 'c', major: 240, minor: 1, fileMode: 0o600, uid: 0, gid: 0 }]);
    const rules = spec.linux.resources!.devices!;
    assert.ok(rules.some((r) => r.allow && r.major === 240 && r.minor === 1 && r.access === 'rw'));
    assert.ok(rules.some((r) => r.allow && r.type === 'c' && r.major === 13 && r.minor === undefined));
  });

  it('sets the default network sysctls for an own network namespace the host supports', () => {
    const both = { pingGroupRange: true, unprivilegedPortStart: true };
    const net = (hc: HostConfig, over: Partial<SpecInput> = {}) => {
      const base = input(hc, over);
      return buildSpec({ ...base, daemon: { ...base.daemon, netSysctls: both }, ...over }).linux.sysctl;
    };
    const defaults = { 'net.ipv4.ping_group_range': '0 2147483647', 'net.ipv4.ip_unprivileged_port_start': '0' };
    assert.deepEqual(net({}), defaults);
    assert.deepEqual(net({ NetworkMode: 'none' }), defaults);
    assert.equal(net({ NetworkMode: 'host' }), undefined);
    assert.equal(net({ NetworkMode: 'container:abc' }, { namespaces: { networkPath: '/proc/1/ns/net' } }), undefined);
    // A remapped root cannot write the sysctls of a network namespace the daemon made.
    const userns = {
      uidMappings: [{ containerID: 0, hostID: 100000, size: 65536 }],
      gidMappings: [{ containerID: 0, hostID: 100000, size: 65536 }],
    };
    assert.equal(net({}, { userns }), undefined);
    // The container's own value wins.
    assert.equal(net({ Sysctls: { 'net.ipv4.ip_unprivileged_port_start': '1024' } })!['net.ipv4.ip_unprivileged_port_start'], '1024');
    // A host without them (or a daemon in a user namespace for ping) sets neither.
    assert.equal(buildSpec(input()).linux.sysctl, undefined);
  });

  it('sets the kernel TCP memory limit on cgroup v1 only', () => {
    assert.equal(buildSpec(input({ KernelMemoryTCP: 8 << 20 })).linux.resources!.memory!.kernelTCP, 8 << 20);
    const base = input({ KernelMemoryTCP: 8 << 20 });
    const warnings: string[] = [];
    const v2 = buildSpec({ ...base, daemon: { ...base.daemon, cgroupVersion: 2 } }, warnings);
    assert.equal(v2.linux.resources!.memory?.kernelTCP, undefined);
    assert.match(warnings.join('\n'), /KernelMemoryTCP is not supported with cgroup v2/);
  });

  it('sets the NIS domain name as kernel.domainname (runc before 1.2 ignores the spec field)', () => {
    const base = input();
    const spec = buildSpec({ ...base, config: { ...base.config, Domainname: 'example.com' } });
    assert.deepEqual(spec.linux.sysctl, { 'kernel.domainname': 'example.com' });
    assert.equal(spec.domainname, undefined);
  });

  it('sysctls and annotations pass through', () => {
    const spec = buildSpec(input({ Sysctls: { 'net.ipv4.ip_forward': '1' }, Annotations: { a: 'b' } }));
    assert.deepEqual(spec.linux.sysctl, { 'net.ipv4.ip_forward': '1' });
    assert.deepEqual(spec.annotations, { a: 'b' });
  });
});

describe('buildSpec: namespaces', () => {
  it('host modes omit the namespace; host UTS drops the hostname', () => {
    const spec = buildSpec(input({ NetworkMode: 'host', PidMode: 'host', IpcMode: 'host', UTSMode: 'host', CgroupnsMode: 'host' }));
    assert.deepEqual(nsTypes(spec), ['mount']);
    assert.equal(spec.hostname, undefined);
  });

  it('container modes join the given paths', () => {
    const spec = buildSpec(
      input(
        { NetworkMode: 'container:abc', PidMode: 'container:abc', IpcMode: 'container:abc' },
        {
          namespaces: { networkPath: '/proc/42/ns/net', pidPath: '/proc/42/ns/pid', ipcPath: '/proc/42/ns/ipc' },
          files: { shmPath: '/data/abc/shm' },
        },
      ),
    );
    const byType = Object.fromEntries(spec.linux.namespaces.map((n) => [n.type, n.path]));
    assert.equal(byType.network, '/proc/42/ns/net');
    assert.equal(byType.pid, '/proc/42/ns/pid');
    assert.equal(byType.ipc, '/proc/42/ns/ipc');
    assert.equal(byType.uts, undefined);
    assert.ok('uts' in byType);
    assert.equal(spec.hostname, 'c0ffee000000');
    const joinedUts = buildSpec(input({}, { namespaces: { utsPath: '/proc/42/ns/uts' } }));
    assert.equal(joinedUts.linux.namespaces.find((n) => n.type === 'uts')!.path, '/proc/42/ns/uts');
    assert.equal(joinedUts.hostname, undefined);
  });

  it('a container mode without a path is a caller bug', () => {
    assert.throws(() => buildSpec(input({ NetworkMode: 'container:abc' })), /needs its namespace path/);
  });

  it('a bridge network joins the prepared netns; none gets a fresh one', () => {
    const s = buildSpec(input({ NetworkMode: 'bridge' }, { namespaces: { networkPath: '/run/engine/netns/x' } }));
    assert.equal(s.linux.namespaces.find((n) => n.type === 'network')!.path, '/run/engine/netns/x');
    const none = buildSpec(input({ NetworkMode: 'none' }));
    assert.deepEqual(
      none.linux.namespaces.find((n) => n.type === 'network'),
      { type: 'network' },
    );
    assert.ok(!nsTypes(buildSpec(input({}, { namespaces: { networkPath: 'host' } }))).includes('network'));
  });

  it('cgroup namespace follows CgroupnsMode and the daemon default', () => {
    assert.ok(!nsTypes(buildSpec(input({ CgroupnsMode: 'host' }))).includes('cgroup'));
    const d = input();
    d.daemon.defaultCgroupnsMode = 'host';
    assert.ok(!nsTypes(buildSpec(d)).includes('cgroup'));
  });
});

describe('buildSpec: cgroups path', () => {
  it('cgroupfs uses the container or daemon parent; systemd uses slice:engine:id', () => {
    assert.equal(buildSpec(input({ CgroupParent: '/custom' })).linux.cgroupsPath, `/custom/${ID}`);
    const d = input();
    d.daemon.cgroupParent = '/daemon-parent/';
    assert.equal(buildSpec(d).linux.cgroupsPath, `/daemon-parent/${ID}`);
    d.daemon.cgroupDriver = 'systemd';
    d.daemon.cgroupParent = '';
    assert.equal(buildSpec(d).linux.cgroupsPath, `system.slice:engine:${ID}`);
    assert.equal(buildSpec({ ...d, hostConfig: { CgroupParent: 'user-a.slice' } }).linux.cgroupsPath, `user-a.slice:engine:${ID}`);
  });
});

describe('buildSpec: user namespace (--userns-remap)', () => {
  const uidMappings = [{ containerID: 0, hostID: 100000, size: 65536 }];
  const gidMappings = [{ containerID: 0, hostID: 200000, size: 65536 }];

  it('adds a user namespace with the mappings; none without them', () => {
    const spec = buildSpec(input({}, { userns: { uidMappings, gidMappings } }));
    assert.ok(nsTypes(spec).includes('user'));
    assert.deepEqual(spec.linux.uidMappings, uidMappings);
    assert.deepEqual(spec.linux.gidMappings, gidMappings);
    const plain = buildSpec(input());
    assert.equal(nsTypes(plain).includes('user'), false);
    assert.equal(plain.linux.uidMappings, undefined);
  });

  it('binds the daemon-mounted sysfs at /sys when given, read-only', () => {
    const spec = buildSpec(input({}, { files: { sysfsPath: '/data/c/mounts/sys' } }));
    assert.deepEqual(mount(spec, '/sys'), {
      destination: '/sys',
      type: 'bind',
      source: '/data/c/mounts/sys',
      options: ['rbind', 'nosuid', 'noexec', 'nodev', 'ro'],
    });
    assert.equal(mount(buildSpec(input()), '/sys')?.type, 'sysfs');
  });
});

describe('buildSpec: rootless without cgroups', () => {
  it('leaves cgroupsPath out, so runc skips the cgroups it cannot create', () => {
    const base = input();
    const spec = buildSpec({ ...base, daemon: { ...base.daemon, noCgroups: true } });
    assert.equal(spec.linux.cgroupsPath, undefined);
    assert.ok(buildSpec(input()).linux.cgroupsPath);
  });
});
