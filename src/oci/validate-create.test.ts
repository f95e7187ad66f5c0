import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EngineError } from '../errors.ts';
import { validateCreateBody, type ValidateOptions } from './validate-create.ts';
import { parseBind, parseVolumesFrom } from './validate-create.ts';

const opts: ValidateOptions = { numCPU: 4, bindSourceExists: (p) => p !== '/missing' };
const hc = (HostConfig: Record<string, unknown>, extra: Record<string, unknown> = {}) =>
  validateCreateBody({ Image: 'busybox', ...extra, HostConfig }, opts);

/** Asserts a 400 (invalidParameter) whose message is exactly `message`. */
function refuses(fn: () => unknown, message: string | RegExp): void {
  assert.throws(fn, (err: unknown) => {
    assert.ok(err instanceof EngineError, `not an EngineError: ${String(err)}`);
    assert.equal(err.status, 400);
    if (typeof message === 'string') assert.equal(err.message, message);
    else assert.match(err.message, message);
    return true;
  });
}

describe('validateCreateBody: types', () => {
  it('accepts a normal body and drops nulls', () => {
    const b = validateCreateBody(
      { Image: 'busybox', Cmd: ['echo', 'hi'], Env: null, HostConfig: { Memory: 0, PidsLimit: null, Binds: ['/tmp:/tmp'] } },
      opts,
    );
    assert.deepEqual(b, { Image: 'busybox', Cmd: ['echo', 'hi'], HostConfig: { Memory: 0, Binds: ['/tmp:/tmp'] } });
  });

  it('turns a string Cmd/Entrypoint into a one-element list and keeps an explicit []', () => {
    const b = validateCreateBody({ Cmd: 'date', Entrypoint: [] }, opts);
    assert.deepEqual(b.Cmd, ['date']);
    assert.deepEqual(b.Entrypoint, []);
    assert.deepEqual(validateCreateBody({ Entrypoint: '' }, opts).Entrypoint, ['']);
  });

  it('refuses wrong JSON types with a Go-style message naming the field', () => {
    refuses(
      () => validateCreateBody({ Env: 'A=1' }, opts),
      'invalid JSON: json: cannot unmarshal string into Go struct field ContainerConfig.Env of type []string',
    );
    refuses(
      () => validateCreateBody({ Cmd: 5 }, opts),
      'invalid JSON: json: cannot unmarshal number 5 into Go struct field ContainerConfig.Cmd of type strslice.StrSlice',
    );
    refuses(
      () => validateCreateBody({ Tty: 'yes' }, opts),
      'invalid JSON: json: cannot unmarshal string into Go struct field ContainerConfig.Tty of type bool',
    );
    refuses(() => hc({ Memory: '1g' }), 'invalid JSON: json: cannot unmarshal string into Go struct field HostConfig.Memory of type int64');
    refuses(
      () => hc({ Memory: 1.5 }),
      'invalid JSON: json: cannot unmarshal number 1.5 into Go struct field HostConfig.Memory of type int64',
    );
    refuses(
      () => hc({ RestartPolicy: { Name: 1 } }),
      'invalid JSON: json: cannot unmarshal number 1 into Go struct field HostConfig.RestartPolicy.Name of type string',
    );
    refuses(() => hc({ Mounts: [{ Target: ['/x'] }] }), /Go struct field HostConfig\.Mounts\.Target of type string/);
    refuses(() => hc({ BlkioWeight: 70000 }), /number 70000 .* of type uint16/);
    refuses(() => validateCreateBody([], opts), /cannot unmarshal array/);
  });

  it('matches field names case-insensitively, like Go', () => {
    const b = validateCreateBody({ image: 'busybox', cmd: ['true'], hostconfig: { memory: 8 * 1024 * 1024 } }, opts);
    assert.equal(b.Image, 'busybox');
    assert.deepEqual(b.Cmd, ['true']);
    assert.equal(b.HostConfig!.Memory, 8 * 1024 * 1024);
  });
});

describe('validateCreateBody: container config', () => {
  it('WorkingDir must be absolute and is cleaned', () => {
    refuses(
      () => validateCreateBody({ WorkingDir: 'srv' }, opts),
      "the working directory 'srv' is invalid, it needs to be an absolute path",
    );
    assert.equal(validateCreateBody({ WorkingDir: '/srv//app/' }, opts).WorkingDir, '/srv/app');
  });

  it('StopSignal must be a signal', () => {
    refuses(() => validateCreateBody({ StopSignal: 'SIGFOO' }, opts), 'Invalid signal: SIGFOO');
    for (const s of ['SIGTERM', 'term', '9', 'SIGRTMIN+3']) validateCreateBody({ StopSignal: s }, opts);
  });

  it('Env names must not be empty', () => {
    refuses(() => validateCreateBody({ Env: ['=x'] }, opts), 'invalid environment variable: =x');
  });

  it('Healthcheck durations are 0 or at least 1ms; retries not negative', () => {
    refuses(() => validateCreateBody({ Healthcheck: { Interval: 500_000 } }, opts), 'Interval in Healthcheck cannot be less than 1ms');
    refuses(() => validateCreateBody({ Healthcheck: { Timeout: -1 } }, opts), 'Timeout in Healthcheck cannot be less than 1ms');
    refuses(() => validateCreateBody({ Healthcheck: { Retries: -1 } }, opts), 'Retries in Healthcheck cannot be negative');
    refuses(() => validateCreateBody({ Healthcheck: { StartPeriod: 1 } }, opts), 'StartPeriod in Healthcheck cannot be less than 1ms');
    refuses(() => validateCreateBody({ Healthcheck: { StartInterval: 10 } }, opts), 'StartInterval in Healthcheck cannot be less than 1ms');
    validateCreateBody({ Healthcheck: { Interval: 0, Timeout: 1_000_000 } }, opts);
  });
});

describe('validateCreateBody: restart policy', () => {
  it('uses dockerd messages', () => {
    refuses(
      () => hc({ RestartPolicy: { Name: 'sometimes' } }),
      "invalid restart policy: unknown policy 'sometimes'; use one of 'no', 'always', 'on-failure', or 'unless-stopped'",
    );
    refuses(
      () => hc({ RestartPolicy: { Name: 'always', MaximumRetryCount: 3 } }),
      "invalid restart policy: maximum retry count can only be used with 'on-failure'",
    );
    refuses(
      () => hc({ RestartPolicy: { Name: 'no', MaximumRetryCount: -1 } }),
      "invalid restart policy: maximum retry count can only be used with 'on-failure' and cannot be negative",
    );
    refuses(
      () => hc({ RestartPolicy: { Name: 'on-failure', MaximumRetryCount: -2 } }),
      'invalid restart policy: maximum retry count cannot be negative',
    );
    refuses(() => hc({ AutoRemove: true, RestartPolicy: { Name: 'always' } }), "can't create 'AutoRemove' container with restart policy");
    for (const Name of ['', 'no', 'always', 'unless-stopped']) hc({ RestartPolicy: { Name } });
    hc({ RestartPolicy: { Name: 'on-failure', MaximumRetryCount: 5 } });
    hc({ RestartPolicy: { Name: '', MaximumRetryCount: 3 } });
  });
});

describe('validateCreateBody: mounts and binds', () => {
  it('Mount types and paths', () => {
    refuses(
      () => hc({ Mounts: [{ Type: 'bind', Source: 'rel', Target: '/x' }] }),
      `invalid mount config for type "bind": invalid mount path: 'rel' mount path must be absolute`,
    );
    refuses(
      () => hc({ Mounts: [{ Type: 'bind', Source: '/tmp', Target: 'x' }] }),
      `invalid mount config for type "bind": invalid mount path: 'x' mount path must be absolute`,
    );
    refuses(
      () => hc({ Mounts: [{ Type: 'volume', Target: '/' }] }),
      `invalid mount config for type "volume": invalid specification: destination can't be '/'`,
    );
    refuses(() => hc({ Mounts: [{ Type: 'bind', Target: '/x' }] }), 'invalid mount config for type "bind": field Source must not be empty');
    refuses(
      () => hc({ Mounts: [{ Type: 'bind', Source: '/missing', Target: '/x' }] }),
      'invalid mount config for type "bind": bind source path does not exist: /missing',
    );
    refuses(
      () => hc({ Mounts: [{ Type: 'tmpfs', Source: '/x', Target: '/x' }] }),
      'invalid mount config for type "tmpfs": field Source must not be specified',
    );
    refuses(
      () => hc({ Mounts: [{ Type: 'volume', Target: '/x', TmpfsOptions: {} }] }),
      'invalid mount config for type "volume": field TmpfsOptions must not be specified',
    );
    refuses(() => hc({ Mounts: [{ Type: 'floppy', Target: '/x' }] }), 'invalid mount config for type "floppy": mount type unknown');
    refuses(
      () => hc({ Mounts: [{ Type: 'tmpfs', Target: '/x', TmpfsOptions: { Options: [['suid']] } }] }),
      'invalid mount config for type "tmpfs": invalid option: suid',
    );
    refuses(
      () => hc({ Mounts: [{ Type: 'bind', Source: '/tmp', Target: '/x', BindOptions: { Propagation: 'sideways' } }] }),
      'invalid mount config for type "bind": invalid propagation mode: sideways',
    );
    hc({
      Mounts: [
        { Type: 'bind', Source: '/missing', Target: '/x', BindOptions: { CreateMountpoint: true } },
        { Type: 'volume', Source: 'data', Target: '/data' },
        { Type: 'tmpfs', Target: '/t' },
      ],
    });
  });

  it('no duplicate mount points across Binds, Mounts and Tmpfs', () => {
    refuses(() => hc({ Binds: ['/a:/x', 'vol:/x/'] }), 'Duplicate mount point: /x');
    refuses(() => hc({ Binds: ['/a:/x'], Mounts: [{ Type: 'volume', Target: '/x' }] }), 'Duplicate mount point: /x');
    refuses(() => hc({ Tmpfs: { '/x': '' }, Mounts: [{ Type: 'tmpfs', Target: '/x' }] }), 'Duplicate mount point: /x');
  });

  it('Binds syntax', () => {
    refuses(() => hc({ Binds: [':/x'] }), "invalid volume specification: ':/x'");
    refuses(() => hc({ Binds: ['/x:ro'] }), "invalid volume specification: '/x:ro'");
    refuses(() => hc({ Binds: ['/a:/b:c:d'] }), "invalid volume specification: '/a:/b:c:d'");
    refuses(() => hc({ Binds: ['/a:/b:rx'] }), 'invalid mode: rx');
    refuses(() => hc({ Binds: ['/a:/b:ro,rw'] }), 'invalid mode: ro,rw');
    refuses(
      () => hc({ Binds: ['/a:b'] }),
      `invalid volume specification: '/a:b': invalid mount config for type "bind": invalid mount path: 'b' mount path must be absolute`,
    );
    refuses(() => hc({ Binds: ['./data:/data'] }), /"\.\/data" includes invalid characters for a local volume name.*use absolute path/);
    assert.deepEqual(parseBind('/host/dir/:/ctr:ro,rshared'), {
      source: '/host/dir',
      destination: '/ctr',
      mode: 'ro,rshared',
      type: 'bind',
      readOnly: true,
      propagation: 'rshared',
    });
    assert.deepEqual(parseBind('myvol:/data'), {
      source: 'myvol',
      destination: '/data',
      mode: '',
      type: 'volume',
      readOnly: false,
      propagation: undefined,
    });
    assert.deepEqual(parseBind('/anon'), {
      source: '',
      destination: '/anon',
      mode: '',
      type: 'volume',
      readOnly: false,
      propagation: undefined,
    });
  });

  it('Tmpfs destinations', () => {
    refuses(() => hc({ Tmpfs: { run: '' } }), "invalid mount path: 'run' mount path must be absolute");
  });
});

describe('validateCreateBody: resources', () => {
  const MB = 1024 * 1024;
  it('memory', () => {
    refuses(() => hc({ Memory: 4 * MB }), 'Minimum memory limit allowed is 6MB');
    refuses(() => hc({ Memory: 64 * MB, MemorySwap: 32 * MB }), 'Minimum memoryswap limit should be larger than memory limit, see usage');
    refuses(() => hc({ MemorySwap: 32 * MB }), 'You should always set the Memory limit when using Memoryswap limit, see usage');
    refuses(() => hc({ MemorySwappiness: 101 }), 'Invalid value: 101, valid memory swappiness range is 0-100');
    refuses(() => hc({ MemoryReservation: MB }), 'Minimum memory reservation allowed is 6MB');
    refuses(
      () => hc({ Memory: 8 * MB, MemoryReservation: 16 * MB }),
      'Minimum memory limit can not be less than memory reservation limit, see usage',
    );
    hc({ Memory: 6 * MB, MemorySwap: -1 });
    assert.equal(hc({ MemorySwappiness: -1 }).HostConfig!.MemorySwappiness, undefined);
  });

  it('cpu', () => {
    refuses(() => hc({ NanoCpus: 1e9, CpuPeriod: 100000 }), 'Conflicting options: Nano CPUs and CPU Period cannot both be set');
    refuses(() => hc({ NanoCpus: 1e9, CpuQuota: 50000 }), 'Conflicting options: Nano CPUs and CPU Quota cannot both be set');
    refuses(() => hc({ NanoCpus: 5e9 }), 'Range of CPUs is from 0.01 to 4.00, as there are only 4 CPUs available');
    refuses(() => hc({ CpuShares: -1 }), /CPU shares cannot be negative/);
    refuses(() => hc({ CpuPeriod: 999 }), 'CPU cfs period can not be less than 1ms (i.e. 1000) or larger than 1s (i.e. 1000000)');
    refuses(() => hc({ CpuQuota: 10 }), 'CPU cfs quota can not be less than 1ms (i.e. 1000)');
    refuses(() => hc({ CpusetCpus: '0-a' }), 'Invalid value 0-a for cpuset cpus: invalid format: 0-a');
    refuses(() => hc({ CpusetCpus: '3-1' }), /Invalid value 3-1 for cpuset cpus/);
    refuses(() => hc({ CpusetCpus: '0,7' }), 'Requested CPUs are not available - requested 0,7, available: 0-3');
    refuses(() => hc({ CpusetMems: 'x' }), 'Invalid value x for cpuset mems: invalid format: x');
    hc({ NanoCpus: 1.5e9, CpusetCpus: '0-1,3', CpuShares: 512 });
  });

  it('pids, shm, blkio, oom score', () => {
    hc({ PidsLimit: -1 });
    hc({ PidsLimit: 100 });
    refuses(() => hc({ ShmSize: -1 }), 'SHM size can not be less than 0');
    refuses(() => hc({ BlkioWeight: 5 }), 'Range of blkio weight is from 10 to 1000');
    refuses(() => hc({ OomScoreAdj: 1001 }), 'Invalid value 1001, range for oom score adj is [-1000, 1000]');
    refuses(() => hc({ IOMaximumIOps: 5 }), /does not support Maximum IO Bandwidth or Maximum IO IOps/);
  });

  it('ulimits', () => {
    refuses(() => hc({ Ulimits: [{ Name: 'nofiles', Soft: 1, Hard: 2 }] }), 'invalid ulimit type: nofiles');
    refuses(
      () => hc({ Ulimits: [{ Name: 'nofile', Soft: 3, Hard: 2 }] }),
      'ulimit soft limit must be less than or equal to hard limit: 3 > 2',
    );
    refuses(
      () => hc({ Ulimits: [{ Name: 'nofile', Soft: -1, Hard: 2 }] }),
      'ulimit soft limit must be less than or equal to hard limit: -1 > 2',
    );
    hc({
      Ulimits: [
        { Name: 'nofile', Soft: 1024, Hard: -1 },
        { Name: 'core', Soft: 0, Hard: 0 },
      ],
    });
  });

  it('devices', () => {
    refuses(() => hc({ Devices: [{ PathOnHost: 'dev/null' }] }), /PathOnHost "dev\/null" must be an absolute path/);
    refuses(() => hc({ Devices: [{ PathOnHost: '/dev/null', CgroupPermissions: 'rwx' }] }), 'invalid device mode: rwx');
    refuses(() => hc({ Devices: [{ PathOnHost: '/dev/null', CgroupPermissions: 'rr' }] }), 'invalid device mode: rr');
    refuses(() => hc({ DeviceCgroupRules: ['c 1:3'] }), "invalid device cgroup format 'c 1:3'");
    hc({
      Devices: [{ PathOnHost: '/dev/null', PathInContainer: '/dev/n', CgroupPermissions: 'rw' }],
      DeviceCgroupRules: ['c 13:* rwm', 'b *:* m'],
    });
  });
});

describe('validateCreateBody: namespaces, sysctls, security', () => {
  it('mode syntax', () => {
    refuses(() => hc({ IpcMode: 'weird' }), 'invalid IPC mode: weird');
    refuses(() => hc({ PidMode: 'container:' }), 'invalid PID mode: container:');
    refuses(() => hc({ UTSMode: 'private' }), 'invalid UTS mode: private');
    refuses(() => hc({ CgroupnsMode: 'shared' }), 'invalid cgroup namespace mode: shared');
    refuses(() => hc({ NetworkMode: 'container:' }), 'Invalid network mode: invalid container format container:<name|id>');
    refuses(() => hc({ NetworkMode: 'container:abc' }, { Hostname: 'x' }), 'conflicting options: hostname and the network mode');
    refuses(
      () => hc({ NetworkMode: 'container:abc', PortBindings: { '80/tcp': [{ HostPort: '8080' }] } }),
      'conflicting options: port publishing and the container type network mode',
    );
    refuses(
      () => hc({ NetworkMode: 'host' }, { MacAddress: '02:42:ac:11:00:02' }),
      'conflicting options: mac-address and the network mode',
    );
    refuses(() => hc({ UTSMode: 'host' }, { Hostname: 'x' }), 'conflicting options: hostname and the UTS mode');
    refuses(() => hc({}, { Hostname: 'h'.repeat(65) }), `hostname "${'h'.repeat(65)}" is too long (maximum 64 bytes)`);
    hc({}, { Hostname: 'h'.repeat(64) });
    hc({ IpcMode: 'shareable', PidMode: 'host', UTSMode: 'host', CgroupnsMode: 'private', NetworkMode: 'mynet' });
    hc({ IpcMode: 'container:abc', NetworkMode: 'container:abc' });
  });

  it('sysctls: namespaced ones only, net.* not with the host network', () => {
    hc({ Sysctls: { 'kernel.msgmax': '65536', 'kernel.shmmax': '1', 'fs.mqueue.msg_max': '10', 'net.ipv4.ip_forward': '1' } });
    refuses(
      () => hc({ Sysctls: { 'net.ipv4.ip_forward': '1' }, NetworkMode: 'host' }),
      'sysctl "net.ipv4.ip_forward" is not allowed in the hosts network namespace',
    );
    refuses(() => hc({ Sysctls: { 'kernel.sem': '1' }, IpcMode: 'host' }), 'sysctl "kernel.sem" is not allowed in the hosts ipc namespace');
    refuses(() => hc({ Sysctls: { 'vm.swappiness': '1' } }), 'sysctl "vm.swappiness" is not in a separate kernel namespace');
    refuses(() => hc({ Sysctls: { 'kernel.hostname': 'x' } }), /conflicts with the OCI "hostname" field/);
  });

  it('capabilities, security options, extra hosts, ports, annotations', () => {
    refuses(() => hc({ CapAdd: ['CAP_FLY'] }), 'invalid CapAdd: unknown capability: "CAP_FLY"');
    refuses(() => hc({ CapDrop: 'mknodx' }), 'invalid CapDrop: unknown capability: "CAP_MKNODX"');
    hc({ CapAdd: ['ALL'], CapDrop: 'NET_RAW' });
    refuses(() => hc({ SecurityOpt: ['nonsense'] }), 'invalid --security-opt 1: "nonsense"');
    refuses(() => hc({ SecurityOpt: ['foo=bar'] }), 'invalid --security-opt 2: "foo=bar"');
    refuses(() => hc({ SecurityOpt: ['no-new-privileges=maybe'] }), 'invalid --security-opt 2: "no-new-privileges=maybe"');
    refuses(() => hc({ SecurityOpt: ['seccomp={'] }), /^Decoding seccomp profile failed/);
    hc({ SecurityOpt: ['seccomp=unconfined', 'apparmor=unconfined', 'label=disable', 'no-new-privileges'] });
    refuses(() => hc({ ExtraHosts: ['db:not-an-ip'] }), 'invalid IP address in add-host: "not-an-ip"');
    refuses(() => hc({ ExtraHosts: ['justahost'] }), 'bad format for add-host: "justahost"');
    hc({ ExtraHosts: ['db:10.0.0.2', 'gw:host-gateway', 'v6:[::1]', 'eq=1.2.3.4'] });
    refuses(() => hc({ PortBindings: { '0/tcp': [] } }), 'invalid port specification: "0/tcp"');
    refuses(() => hc({ PortBindings: { '80/tcp': [{ HostPort: '99999' }] } }), 'invalid port specification: "99999"');
    hc({ PortBindings: { '80/tcp': [{ HostIp: '127.0.0.1', HostPort: '8080' }], '53/udp': null, '443': [{ HostPort: '' }] } });
    refuses(() => hc({ Annotations: { '': 'x' } }), 'invalid Annotations: the empty string is not permitted as an annotation key');
  });

  it('a systemd daemon wants a slice as CgroupParent', () => {
    assert.throws(
      () => validateCreateBody({ HostConfig: { CgroupParent: '/foo' } }, { ...opts, cgroupDriver: 'systemd' }),
      /valid slice named as "xxx.slice"/,
    );
    validateCreateBody({ HostConfig: { CgroupParent: 'my.slice' } }, { ...opts, cgroupDriver: 'systemd' });
  });

  it('collects warnings', () => {
    const warnings: string[] = [];
    validateCreateBody(
      { HostConfig: { OomKillDisable: true, NetworkMode: 'host', PortBindings: { '80/tcp': [] } } },
      { ...opts, warnings },
    );
    assert.equal(warnings.length, 2);
  });
});

describe('parseVolumesFrom', () => {
  it('takes container[:mode]: ro/rw and labels, no propagation or nocopy', () => {
    assert.deepEqual(parseVolumesFrom('data'), { ref: 'data', readWrite: true });
    assert.deepEqual(parseVolumesFrom('data:ro'), { ref: 'data', readWrite: false });
    assert.deepEqual(parseVolumesFrom('data:rw,z'), { ref: 'data', readWrite: true });
    refuses(() => parseVolumesFrom(''), 'volumes-from specification cannot be an empty string');
    refuses(() => parseVolumesFrom('data:rshared'), 'invalid mode: rshared');
    refuses(() => parseVolumesFrom('data:nocopy'), 'invalid mode: nocopy');
    refuses(() => parseVolumesFrom('data:bogus'), 'invalid mode: bogus');
  });
});
