// Issue 3, parts 2–5: the OCI runtime spec options, runtimes, storage drivers and logging, each
// through the docker CLI against daemons started with the options under test.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmdirSync, statSync } from 'node:fs';
import { chmod, copyFile, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { gunzipSync } from 'node:zlib';
import { capabilityMask, DEFAULT_CAPABILITIES, readOwnCapabilities } from '../../src/oci/caps.ts';
import { parseProcLimits } from '../../src/oci/rlimits.ts';
import { startDaemon, type CommandResult, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function ok(r: CommandResult, what = 'command'): string {
  assert.equal(r.code, 0, `${what} failed (${r.code}): ${r.stderr}`);
  return r.stdout;
}

const inspect = async (d: TestDaemon, ref: string) => JSON.parse(ok(await d.docker(['inspect', ref]), 'inspect'))[0];
const lines = (text: string) => text.split('\n').filter((l) => l !== '');
const rand = () => Math.random().toString(36).slice(2, 8);

/** v1 cgroup controller directories; the host is cgroup v1 (hybrid), see host-quirks.md. */
const CGROUP_V1 = '/sys/fs/cgroup';
function cgroupFile(controller: string, path: string, file: string): string {
  return readFileSync(join(CGROUP_V1, controller, path, file), 'utf8').trim();
}

/** Removes a test's parent cgroup from every v1 hierarchy (runc leaves parents behind). */
function removeCgroup(path: string): void {
  for (const c of readdirSync(CGROUP_V1)) {
    const dir = join(CGROUP_V1, c, path);
    try {
      if (statSync(dir).isDirectory()) rmdirSync(dir);
    } catch {
      // not in this hierarchy, or not a cgroup mount
    }
  }
}

/** Starts a daemon that must refuse to start; returns its exit code and output. */
async function refusedStartup(args: string[], config?: Record<string, unknown>): Promise<{ code: number | null; output: string }> {
  const d = await startDaemon({ args, ...(config ? { config } : {}), waitReady: false });
  try {
    const code = await Promise.race([d.exited, sleep(30_000).then(() => 'timeout' as const)]);
    assert.notEqual(code, 'timeout', `daemon with ${args.join(' ')} did not exit:\n${d.output}`);
    return { code: code as number | null, output: d.output };
  } finally {
    await d.cleanup();
  }
}

// ---- spec options, per container -------------------------------------------------------------

describe('runtime spec options per container', () => {
  let d: TestDaemon;
  let hostDir: string;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
    hostDir = await mkdtemp(join(tmpdir(), 'engine-bind-'));
  });
  after(async () => {
    await d?.cleanup();
    await rm(hostDir, { recursive: true, force: true });
  });

  test('docker info shows the overlay2 storage driver', async () => {
    const info = ok(await d.docker(['info']));
    assert.match(info, /^ Storage Driver: overlay2$/m);
    assert.equal(ok(await d.docker(['info', '--format', '{{.Driver}}'])).trim(), 'overlay2');
  });

  test('--init: PID 1 is the init and the command its child', async () => {
    const out = ok(await d.docker(['run', '--rm', '--init', 'busybox', 'ps', '-o', 'pid,ppid,args']));
    const rows = lines(out)
      .slice(1)
      .map((l) => l.trim().split(/\s+/));
    const init = rows.find((r) => r[0] === '1');
    assert.ok(init, out);
    assert.equal(init[2], '/sbin/engine-init', out);
    const ps = rows.find((r) => r[2] === 'ps');
    assert.ok(ps, out);
    assert.equal(ps[1], '1', `ps must be the init's child:\n${out}`);
    const without = ok(await d.docker(['run', '--rm', 'busybox', 'ps', '-o', 'pid,args']));
    assert.match(without, /^\s*1 ps -o pid,args$/m);
  });

  test("--ulimit is applied; without it the daemon's limits are inherited", async () => {
    assert.equal(
      ok(await d.docker(['run', '--rm', '--ulimit', 'nofile=1024:2048', 'busybox', 'sh', '-c', 'ulimit -n; ulimit -Hn'])),
      '1024\n2048\n',
    );
    const daemonHard = parseProcLimits(readFileSync(`/proc/${d.pid}/limits`, 'utf8'))['nofile']!;
    assert.equal(ok(await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'ulimit -Hn'])).trim(), daemonHard.toString());
  });

  test("a ulimit above the daemon's own hard limit is refused with a clear error", async () => {
    const daemonHard = parseProcLimits(readFileSync(`/proc/${d.pid}/limits`, 'utf8'))['nofile']!;
    const canRaise = readOwnCapabilities(readFileSync(`/proc/${d.pid}/status`, 'utf8')).includes('CAP_SYS_RESOURCE');
    const want = daemonHard + 1n;
    const r = await d.docker(['run', '--rm', '--ulimit', `nofile=1024:${want}`, 'busybox', 'true']);
    if (canRaise) {
      assert.equal(r.code, 0, r.stderr);
      return;
    }
    assert.equal(r.code, 125);
    assert.match(r.stderr, new RegExp(`ulimit nofile: hard limit ${want} is above the daemon's own hard limit ${daemonHard}`));
    const api = await d.request('POST', '/containers/create', {
      body: { Image: 'busybox', Cmd: ['true'], HostConfig: { Ulimits: [{ Name: 'nofile', Soft: 1024, Hard: Number(want) }] } },
    });
    assert.equal(api.status, 400);
    assert.match(api.json().message, /CAP_SYS_RESOURCE/);
  });

  test('--shm-size sets the /dev/shm tmpfs; the default is 64M', async () => {
    const sized = ok(await d.docker(['run', '--rm', '--shm-size', '32m', 'busybox', 'df', '-k', '/dev/shm']));
    assert.match(sized, /^shm\s+32768\s/m);
    const dflt = ok(await d.docker(['run', '--rm', 'busybox', 'df', '-k', '/dev/shm']));
    assert.match(dflt, /^shm\s+65536\s/m);
  });

  test('--dns, --dns-search, --dns-opt, --add-host and --hostname shape /etc files', async () => {
    const out = ok(
      await d.docker([
        'run',
        '--rm',
        '--dns',
        '1.2.3.4',
        '--dns-search',
        'ex.example',
        '--dns-opt',
        'ndots:2',
        '--add-host',
        'foo.test:5.6.7.8',
        '--hostname',
        'box1',
        'busybox',
        'sh',
        '-c',
        'cat /etc/resolv.conf; echo ---; cat /etc/hosts; echo ---; hostname; cat /etc/hostname',
      ]),
    );
    const [resolv, hosts, names] = out.split('---\n');
    assert.match(resolv!, /^nameserver 1\.2\.3\.4$/m);
    assert.match(resolv!, /^search ex\.example$/m);
    assert.match(resolv!, /^options ndots:2$/m);
    assert.doesNotMatch(resolv!, /^nameserver (?!1\.2\.3\.4)/m);
    assert.match(hosts!, /^5\.6\.7\.8\s+foo\.test$/m);
    assert.match(hosts!, /^127\.0\.0\.1\s+localhost/m);
    assert.equal(names, 'box1\nbox1\n');
  });

  test('--read-only makes the root read-only; --tmpfs and --mount type=tmpfs stay writable', async () => {
    const ro = await d.docker(['run', '--rm', '--read-only', 'busybox', 'touch', '/x']);
    assert.notEqual(ro.code, 0);
    assert.match(ro.stderr, /Read-only file system/);
    const out = ok(
      await d.docker([
        'run',
        '--rm',
        '--read-only',
        '--tmpfs',
        '/run:size=1m',
        '--mount',
        'type=tmpfs,dst=/scratch,tmpfs-size=2m',
        'busybox',
        'sh',
        '-c',
        'touch /run/a /scratch/b && df -k /run /scratch && grep -E " /(run|scratch) " /proc/mounts',
      ]),
    );
    assert.match(out, /^tmpfs\s+1024\s.*\/run$/m);
    assert.match(out, /^tmpfs\s+2048\s.*\/scratch$/m);
    assert.match(out, /^tmpfs \/run tmpfs /m);
  });

  test('-v binds a host directory (rw, ro, created when missing)', async () => {
    ok(await d.docker(['run', '--rm', '-v', `${hostDir}:/x`, 'busybox', 'sh', '-c', 'echo from-container > /x/file']));
    assert.equal(readFileSync(join(hostDir, 'file'), 'utf8'), 'from-container\n');
    const ro = await d.docker(['run', '--rm', '-v', `${hostDir}:/x:ro`, 'busybox', 'sh', '-c', 'cat /x/file; echo no > /x/file']);
    assert.notEqual(ro.code, 0);
    assert.equal(ro.stdout, 'from-container\n');
    assert.match(ro.stderr, /Read-only file system/);
    const missing = join(hostDir, 'made', 'by', 'daemon');
    ok(await d.docker(['run', '--rm', '-v', `${missing}:/m`, 'busybox', 'touch', '/m/ok']));
    assert.ok(existsSync(join(missing, 'ok')));
    const mountBind = await d.docker(['run', '--rm', '--mount', `type=bind,src=${join(hostDir, 'absent')},dst=/y`, 'busybox', 'true']);
    assert.equal(mountBind.code, 125);
    assert.match(mountBind.stderr, /bind source path does not exist/);
  });

  test('--cap-drop and --cap-add change the capability set', async () => {
    const dflt = ok(await d.docker(['run', '--rm', 'busybox', 'grep', 'CapEff', '/proc/self/status']));
    assert.equal(dflt.trim().split(/\s+/)[1], capabilityMask(DEFAULT_CAPABILITIES));
    const changed = ok(
      await d.docker([
        'run',
        '--rm',
        '--cap-drop',
        'NET_RAW',
        '--cap-drop',
        'chown',
        '--cap-add',
        'SYS_ADMIN',
        'busybox',
        'grep',
        'CapEff',
        '/proc/self/status',
      ]),
    );
    const expected = [...DEFAULT_CAPABILITIES.filter((c) => c !== 'CAP_NET_RAW' && c !== 'CAP_CHOWN'), 'CAP_SYS_ADMIN'];
    assert.equal(changed.trim().split(/\s+/)[1], capabilityMask(expected));
    const chown = await d.docker(['run', '--rm', '--cap-drop', 'CHOWN', 'busybox', 'sh', '-c', 'touch /f && chown 1:1 /f']);
    assert.notEqual(chown.code, 0);
    assert.match(chown.stderr, /Operation not permitted/);
  });

  test('--privileged works with the capabilities the daemon has (no CAP_SYS_RESOURCE here)', async () => {
    const own = readFileSync(`/proc/${d.pid}/status`, 'utf8');
    const ownEff = /^CapEff:\s*([0-9a-f]+)$/m.exec(own)![1]!;
    const out = ok(
      await d.docker([
        'run',
        '--rm',
        '--privileged',
        'busybox',
        'sh',
        '-c',
        'grep CapEff /proc/self/status; ls /dev | wc -l; mkdir -p /tmp/m && mount -t tmpfs none /tmp/m && echo mounted; grep -c "" /proc/self/mountinfo >/dev/null',
      ]),
    );
    assert.match(out, new RegExp(`^CapEff:\\s+${ownEff}$`, 'm'));
    assert.match(out, /^mounted$/m);
    const devCount = Number(lines(out)[1]);
    const plainDevs = Number(ok(await d.docker(['run', '--rm', 'busybox', 'sh', '-c', 'ls /dev | wc -l'])).trim());
    assert.ok(devCount > plainDevs, `privileged sees the host's devices (${devCount} vs ${plainDevs})`);
  });

  test('--security-opt no-new-privileges sets the flag; the default leaves it off', async () => {
    assert.match(
      ok(await d.docker(['run', '--rm', '--security-opt', 'no-new-privileges', 'busybox', 'grep', 'NoNewPrivs', '/proc/self/status'])),
      /NoNewPrivs:\s+1/,
    );
    assert.match(ok(await d.docker(['run', '--rm', 'busybox', 'grep', 'NoNewPrivs', '/proc/self/status'])), /NoNewPrivs:\s+0/);
  });

  test("--cpus, --memory and --pids-limit are written to the container's cgroup (v1 under /engine)", async () => {
    const id = ok(await d.docker(['run', '-d', '--cpus', '0.5', '--memory', '64m', '--pids-limit', '50', 'busybox', 'sleep', '30'])).trim();
    try {
      const path = `engine/${id}`;
      assert.equal(cgroupFile('cpu', path, 'cpu.cfs_quota_us'), '50000');
      assert.equal(cgroupFile('cpu', path, 'cpu.cfs_period_us'), '100000');
      assert.equal(cgroupFile('memory', path, 'memory.limit_in_bytes'), String(64 * 1024 * 1024));
      assert.equal(cgroupFile('pids', path, 'pids.max'), '50');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
  });

  test('--cgroup-parent places the container under that cgroup', async () => {
    const parent = `/engine-test-${rand()}`;
    const id = ok(await d.docker(['run', '-d', '--cgroup-parent', parent, 'busybox', 'sleep', '30'])).trim();
    try {
      assert.ok(existsSync(join(CGROUP_V1, 'pids', parent, id)), 'container cgroup under the parent');
      const pid = (await inspect(d, id)).State.Pid;
      assert.match(readFileSync(`/proc/${pid}/cgroup`, 'utf8'), new RegExp(`:pids:${parent}/${id}$`, 'm'));
    } finally {
      await d.docker(['rm', '-f', id]);
      removeCgroup(parent);
    }
  });

  test('--ipc shareable: another container joins its IPC namespace and /dev/shm', async () => {
    const name = `donor-${rand()}`;
    ok(
      await d.docker([
        'run',
        '-d',
        '--name',
        name,
        '--ipc',
        'shareable',
        '--shm-size',
        '8m',
        'busybox',
        'sh',
        '-c',
        'echo shared > /dev/shm/f; sleep 60',
      ]),
    );
    try {
      await until(
        'donor wrote /dev/shm/f',
        async () => ((await d.docker(['exec', name, 'cat', '/dev/shm/f'])).stdout === 'shared\n' ? true : undefined),
        5000,
      ).catch(() => sleep(500));
      const out = ok(
        await d.docker([
          'run',
          '--rm',
          '--ipc',
          `container:${name}`,
          'busybox',
          'sh',
          '-c',
          'cat /dev/shm/f; df -k /dev/shm; readlink /proc/self/ns/ipc',
        ]),
      );
      assert.match(out, /^shared$/m);
      assert.match(out, /^shm\s+8192\s/m);
      const donorPid = (await inspect(d, name)).State.Pid;
      assert.match(out, new RegExp(`^${readlinkNs(donorPid, 'ipc').replace(/[[\]]/g, '\\$&')}$`, 'm'));
      const plain = `plain-${rand()}`;
      ok(await d.docker(['run', '-d', '--name', plain, 'busybox', 'sleep', '60']));
      const refused = await d.docker(['run', '--rm', '--ipc', `container:${plain}`, 'busybox', 'true']);
      assert.notEqual(refused.code, 0);
      assert.match(refused.stderr, /non-shareable IPC/);
      await d.docker(['rm', '-f', plain]);
    } finally {
      await d.docker(['rm', '-f', name]);
    }
    assert.doesNotMatch(
      readFileSync('/proc/mounts', 'utf8'),
      new RegExp(`${d.dataRoot}/containers/[0-9a-f]+/mounts/shm`),
      'shm unmounted at removal',
    );
  });
});

function readlinkNs(pid: number, ns: string): string {
  return execFileSync('readlink', [`/proc/${pid}/ns/${ns}`], { encoding: 'utf8' }).trim();
}

// ---- spec options, daemon defaults -----------------------------------------------------------

describe('runtime spec daemon defaults', () => {
  let d: TestDaemon;
  let dir: string;
  const parent = `/engine-test-d-${rand()}`;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-seccomp-'));
    // Allows everything but mkdir: proves the daemon's profile is the one applied.
    await writeFile(
      join(dir, 'profile.json'),
      JSON.stringify({
        defaultAction: 'SCMP_ACT_ALLOW',
        syscalls: [{ names: ['mkdir', 'mkdirat'], action: 'SCMP_ACT_ERRNO' }],
      }),
    );
    d = await startDaemon({
      args: [
        '--init',
        '--default-ulimit',
        'nofile=512:1024',
        '--default-shm-size',
        '16M',
        '--dns',
        '9.9.9.9',
        '--dns-search',
        'd.example',
        '--dns-opt',
        'ndots:3',
        '--no-new-privileges',
        '--seccomp-profile',
        join(dir, 'profile.json'),
        '--cgroup-parent',
        parent,
        '--default-cgroupns-mode',
        'host',
        '--default-ipc-mode',
        'shareable',
      ],
    });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    removeCgroup(parent);
    await rm(dir, { recursive: true, force: true });
  });

  test('the defaults apply to a new container', async () => {
    const id = ok(await d.docker(['run', '-d', 'busybox', 'sh', '-c', 'sleep 30'])).trim();
    try {
      const sh = (cmd: string) => d.docker(['exec', id, 'sh', '-c', cmd]);
      // --init: the command runs under the init.
      const ps = ok(await sh('ps -o pid,args'));
      assert.match(ps, /^\s*1 \/sbin\/engine-init -- sh -c sleep 30$/m);
      // --default-ulimit
      const pid = (await inspect(d, id)).State.Pid;
      const limits = parseProcLimits(readFileSync(`/proc/${pid}/limits`, 'utf8'));
      assert.equal(limits['nofile'], 1024n);
      assert.match(readFileSync(`/proc/${pid}/limits`, 'utf8'), /^Max open files\s+512\s+1024\s/m);
      // --default-shm-size (and --default-ipc-mode shareable: the daemon mounted the tmpfs)
      assert.match(ok(await sh('df -k /dev/shm')), /^shm\s+16384\s/m);
      assert.match(
        readFileSync('/proc/mounts', 'utf8'),
        new RegExp(`^shm ${d.dataRoot}/containers/${id}/mounts/shm tmpfs .*size=16384k`, 'm'),
      );
      assert.equal((await inspect(d, id)).HostConfig.IpcMode, 'shareable');
      // --dns*
      const resolv = ok(await sh('cat /etc/resolv.conf'));
      assert.match(resolv, /^nameserver 9\.9\.9\.9$/m);
      assert.match(resolv, /^search d\.example$/m);
      assert.match(resolv, /^options ndots:3$/m);
      // --no-new-privileges (PID 1's status; exec'd processes get their own flag)
      assert.match(readFileSync(`/proc/${pid}/status`, 'utf8'), /^NoNewPrivs:\s+1$/m);
      // --cgroup-parent
      assert.ok(existsSync(join(CGROUP_V1, 'pids', parent, id)), "container cgroup under the daemon's cgroup parent");
      // --default-cgroupns-mode host: the container sees the host's cgroup paths
      assert.match(ok(await sh('cat /proc/1/cgroup')), new RegExp(`:pids:${parent}/${id}$`, 'm'));
      assert.equal((await inspect(d, id)).HostConfig.CgroupnsMode, 'host');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
  });

  test('--seccomp-profile <file> applies that profile; seccomp=unconfined lifts it', async () => {
    const blocked = await d.docker(['run', '--rm', 'busybox', 'mkdir', '/tmp/x']);
    assert.notEqual(blocked.code, 0);
    assert.match(blocked.stderr, /Operation not permitted/);
    ok(await d.docker(['run', '--rm', '--security-opt', 'seccomp=unconfined', 'busybox', 'mkdir', '/tmp/x']));
    assert.match(ok(await d.docker(['info', '--format', '{{json .SecurityOptions}}'])), /name=seccomp,profile=custom/);
  });

  test('per-container settings override the daemon defaults', async () => {
    const out = ok(
      await d.docker([
        'run',
        '--rm',
        '--ulimit',
        'nofile=100:200',
        '--dns',
        '1.1.1.1',
        '--shm-size',
        '8m',
        '--ipc',
        'private',
        '--cgroupns',
        'private',
        '--init=false',
        'busybox',
        'sh',
        '-c',
        'ulimit -n; ulimit -Hn; df -k /dev/shm; cat /etc/resolv.conf; cat /proc/self/cgroup; ps -o pid,args',
      ]),
    );
    assert.match(out, /^100\n200\n/);
    assert.match(out, /^shm\s+8192\s/m);
    assert.match(out, /^nameserver 1\.1\.1\.1$/m);
    assert.doesNotMatch(out, /9\.9\.9\.9/);
    assert.match(out, /:pids:\/$/m, 'private cgroup namespace');
    assert.doesNotMatch(out, /engine-init/, 'no init');
  });

  test('the options are built: no "not built yet" warnings for them', async () => {
    const info = await d.docker(['info']);
    ok(info);
    for (const key of [
      'init',
      'default-ulimits',
      'default-shm-size',
      'dns',
      'dns-search',
      'dns-opts',
      'no-new-privileges',
      'seccomp-profile',
      'cgroup-parent',
      'default-cgroupns-mode',
      'default-ipc-mode',
    ]) {
      assert.doesNotMatch(info.stderr, new RegExp(`WARNING: ${key} is set but not built yet`), key);
    }
  });
});

describe('real-time CPU budget of the parent cgroup (cgroup v1); --init-path; --seccomp-profile unconfined', () => {
  let d: TestDaemon;
  let dir: string;
  const parent = `/engine-test-rt-${rand()}`;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-init-'));
    await copyFile('/usr/bin/tini-static', join(dir, 'my-init'));
    d = await startDaemon({
      args: [
        '--cgroup-parent',
        parent,
        '--cpu-rt-period',
        '1000000',
        '--cpu-rt-runtime',
        '20000',
        '--init-path',
        join(dir, 'my-init'),
        '--seccomp-profile',
        'unconfined',
      ],
    });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    removeCgroup(parent);
    await rm(dir, { recursive: true, force: true });
  });

  test('--seccomp-profile unconfined: no filter by default (unshare -U works), builtin still selectable', async () => {
    assert.match(ok(await d.docker(['run', '--rm', 'busybox', 'grep', 'Seccomp:', '/proc/self/status'])), /Seccomp:\s+0/);
    ok(await d.docker(['run', '--rm', 'busybox', 'unshare', '-U', 'true']));
    assert.match(
      ok(await d.docker(['run', '--rm', '--security-opt', 'seccomp=builtin', 'busybox', 'grep', 'Seccomp:', '/proc/self/status'])),
      /Seccomp:\s+2/,
    );
    assert.match(ok(await d.docker(['info', '--format', '{{json .SecurityOptions}}'])), /name=seccomp,profile=unconfined/);
  });

  test('--init-path: --init runs that binary as PID 1', async () => {
    const id = ok(await d.docker(['run', '-d', '--init', 'busybox', 'sleep', '30'])).trim();
    try {
      const pid = (await inspect(d, id)).State.Pid;
      assert.equal(readFileSync(`/proc/${pid}/cmdline`, 'utf8'), '/sbin/engine-init\0--\0sleep\x0030\0');
      // The bind mount at /sbin/engine-init comes from our copy (mountinfo's root field names the source file).
      const line = readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
        .split('\n')
        .find((l) => l.split(' ')[4] === '/sbin/engine-init');
      assert.ok(line, 'init bind mount present');
      assert.match(line.split(' ')[3]!, /\/my-init$/);
    } finally {
      await d.docker(['rm', '-f', id]);
    }
    const info = await d.docker(['info']);
    assert.doesNotMatch(info.stderr, /init-path is set but not built yet/);
  });

  test('--cpu-rt-period/--cpu-rt-runtime set the parent cgroup; a container can use part of it', async () => {
    assert.equal(cgroupFile('cpu', parent, 'cpu.rt_period_us'), '1000000');
    assert.equal(cgroupFile('cpu', parent, 'cpu.rt_runtime_us'), '20000');
    const id = ok(await d.docker(['run', '-d', '--cpu-rt-runtime', '5000', '--cap-add', 'SYS_NICE', 'busybox', 'sleep', '30'])).trim();
    try {
      assert.equal(cgroupFile('cpu', `${parent}/${id}`, 'cpu.rt_runtime_us'), '5000');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
    const info = await d.docker(['info']);
    assert.doesNotMatch(info.stderr, /cpu-rt-(period|runtime) is set but not built yet/);
  });
});

describe('daemon start-up refusals', () => {
  test('--exec-opt native.cgroupdriver=systemd without systemd refuses to start', async () => {
    const r = await refusedStartup(['--exec-opt', 'native.cgroupdriver=systemd']);
    assert.notEqual(r.code, 0);
    assert.match(r.output, /systemd cgroup driver requested but systemd is not running/);
  });

  for (const [driver, why] of [
    ['btrfs', /storage driver btrfs needs the data root on a btrfs filesystem: .* is on /],
    ['zfs', /storage driver zfs .*(must be a zfs filesystem|zfs)/],
    // fuse-overlayfs is served by the daemon itself (storage-fuse-overlayfs.test.ts).
  ] as const) {
    test(`--storage-driver ${driver} fails with a message naming the driver and why`, async () => {
      const r = await refusedStartup(['--storage-driver', driver]);
      assert.notEqual(r.code, 0);
      assert.match(r.output, why);
    });
  }

  test('a --seccomp-profile file that cannot be read refuses start-up', async () => {
    const r = await refusedStartup(['--seccomp-profile', '/nonexistent/profile.json']);
    assert.notEqual(r.code, 0);
    assert.match(r.output, /opening seccomp profile \(\/nonexistent\/profile\.json\) failed/);
  });

  test('--storage-opt overlay2.size fails clearly on this backing filesystem', async () => {
    const r = await refusedStartup(['--storage-opt', 'overlay2.size=1G']);
    assert.notEqual(r.code, 0);
    assert.match(r.output, /overlay2\.size/);
    assert.match(r.output, /xfs/);
  });
});

// ---- runtimes --------------------------------------------------------------------------------

describe('runtimes', () => {
  let d: TestDaemon;
  let dir: string;
  let runc2Root: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-rt-'));
    runc2Root = join(dir, 'runc2');
    // crun refuses hybrid cgroups (host-quirks.md); in a private mount namespace without the
    // cgroup2 tree at /sys/fs/cgroup/unified it sees plain v1 and runs.
    await writeFile(
      join(dir, 'crun-v1'),
      `#!/bin/sh\nexec unshare -m sh -c 'umount /sys/fs/cgroup/unified 2>/dev/null; exec /usr/bin/crun "$@"' crun "$@"\n`,
    );
    await chmod(join(dir, 'crun-v1'), 0o755);
    d = await startDaemon({
      args: [
        '--add-runtime',
        'myrunc=/usr/sbin/runc',
        '--add-runtime',
        'crun=/usr/bin/crun',
        '--add-runtime',
        `crun-v1=${join(dir, 'crun-v1')}`,
        '--default-runtime',
        'myrunc',
      ],
      config: {
        runtimes: {
          runc2: { path: '/usr/sbin/runc', runtimeArgs: ['--root', runc2Root] },
          typed: { runtimeType: 'io.containerd.runc.v2', options: { BinaryName: '/usr/sbin/runc' } },
        },
      },
    });
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  /** The runc binary containerd's shim was told to use for a container (its runc options). */
  function shimBinary(id: string): string {
    const out = execFileSync('ctr', ['-a', join(d.execRoot, 'containerd', 'containerd.sock'), '-n', 'engine', 'containers', 'info', id], {
      encoding: 'utf8',
    });
    const options = JSON.parse(out).Runtime.Options;
    return Buffer.from(options.value, 'base64').toString('latin1');
  }

  test('docker info lists the runtimes and the default', async () => {
    const info = JSON.parse(ok(await d.docker(['info', '--format', '{{json .}}'])));
    assert.equal(info.DefaultRuntime, 'myrunc');
    assert.deepEqual(info.Runtimes.myrunc, { path: '/usr/sbin/runc' });
    assert.deepEqual(info.Runtimes.runc2, { path: '/usr/sbin/runc', runtimeArgs: ['--root', runc2Root] });
    assert.ok(info.Runtimes.runc, 'runc is registered');
    assert.ok(info.Runtimes.crun && info.Runtimes['crun-v1']);
    assert.match(ok(await d.docker(['info'])), /^ Default Runtime: myrunc$/m);
  });

  test('--default-runtime: new containers get it, and the shim runs its binary', async () => {
    const id = ok(await d.docker(['run', '-d', 'busybox', 'sleep', '30'])).trim();
    try {
      assert.equal((await inspect(d, id)).HostConfig.Runtime, 'myrunc');
      assert.ok(shimBinary(id).includes('/usr/sbin/runc'), 'the shim was given /usr/sbin/runc');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
    const builtin = ok(await d.docker(['run', '-d', '--runtime', 'runc', 'busybox', 'sleep', '30'])).trim();
    try {
      assert.equal((await inspect(d, builtin)).HostConfig.Runtime, 'runc');
      assert.ok(!shimBinary(builtin).includes('/usr/sbin/runc'));
    } finally {
      await d.docker(['rm', '-f', builtin]);
    }
  });

  test('--runtime myrunc (added with --add-runtime) runs a container', async () => {
    assert.equal(ok(await d.docker(['run', '--rm', '--runtime', 'myrunc', 'busybox', 'echo', 'via-myrunc'])), 'via-myrunc\n');
  });

  test('runtimes in the file: runtimeArgs are passed (runc state under their --root)', async () => {
    const id = ok(await d.docker(['run', '-d', '--runtime', 'runc2', 'busybox', 'sleep', '30'])).trim();
    try {
      assert.equal((await inspect(d, id)).HostConfig.Runtime, 'runc2');
      // The shim keeps one directory per containerd namespace below the root.
      await until(
        'runc state under the runtimeArgs root',
        () => (existsSync(join(runc2Root, 'engine', id, 'state.json')) ? true : undefined),
        5000,
      );
      assert.ok(!existsSync(join(d.execRoot, 'runc', 'engine', id)), 'not under the default runc root');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
    assert.ok(!existsSync(join(runc2Root, 'engine', id)), 'runc state removed with the container');
  });

  test('runtimeType with runc shim options (BinaryName) runs a container', async () => {
    const id = ok(await d.docker(['run', '-d', '--runtime', 'typed', 'busybox', 'sleep', '30'])).trim();
    try {
      assert.equal((await inspect(d, id)).HostConfig.Runtime, 'typed');
      assert.ok(shimBinary(id).includes('/usr/sbin/runc'), 'BinaryName reached the shim');
    } finally {
      await d.docker(['rm', '-f', id]);
    }
    const info = JSON.parse(ok(await d.docker(['info', '--format', '{{json .Runtimes}}'])));
    assert.equal(info.typed.runtimeType, 'io.containerd.runc.v2');
  });

  test('a shim on PATH is selectable by its name', async () => {
    assert.equal(ok(await d.docker(['run', '--rm', '--runtime', 'io.containerd.runc.v2', 'busybox', 'echo', 'via-shim'])), 'via-shim\n');
  });

  test('an unknown runtime is a 400 with a clear message', async () => {
    const r = await d.request('POST', '/containers/create', { body: { Image: 'busybox', Cmd: ['true'], HostConfig: { Runtime: 'nope' } } });
    assert.equal(r.status, 400);
    assert.equal(r.json().message, 'unknown or invalid runtime name: nope');
    const cli = await d.docker(['run', '--rm', '--runtime', 'nope', 'busybox', 'true']);
    assert.equal(cli.code, 125);
    assert.match(cli.stderr, /unknown or invalid runtime name: nope/);
  });

  test("crun registered as a runtime runs, or reports this host's hybrid-cgroup refusal", async () => {
    const r = await d.docker(['run', '--rm', '--runtime', 'crun', 'busybox', 'echo', 'via-crun']);
    if (r.code === 0) {
      assert.equal(r.stdout, 'via-crun\n');
    } else {
      // Environment limit (host-quirks.md), surfaced verbatim to the client.
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /cgroups in hybrid mode not supported/);
    }
  });

  test('crun through a wrapper without the cgroup2 tree runs a container', async () => {
    const out = ok(await d.docker(['run', '--rm', '--runtime', 'crun-v1', '--memory', '32m', 'busybox', 'sh', '-c', 'echo via-crun-v1']));
    assert.equal(out, 'via-crun-v1\n');
    const id = ok(await d.docker(['run', '-d', '--runtime', 'crun-v1', 'busybox', 'sleep', '30'])).trim();
    try {
      // crun's own state files (runc keeps state.json instead).
      await until('crun state', () => (existsSync(join(d.execRoot, 'runc', 'engine', id, 'status')) ? true : undefined), 5000);
      assert.ok(!existsSync(join(d.execRoot, 'runc', 'engine', id, 'state.json')));
      assert.equal((await inspect(d, id)).State.Running, true);
    } finally {
      await d.docker(['rm', '-f', id]);
    }
  });
});

// ---- logging ---------------------------------------------------------------------------------

/** A shell loop printing "line 0" … "line n-1", pausing every `every` lines. */
const numbered = (n: number, every = 0, pause = '0.02') =>
  `i=0; while [ $i -lt ${n} ]; do echo line $i; i=$((i+1)); ${every ? `[ $((i % ${every})) -eq 0 ] && sleep ${pause};` : ''} done; true`;

function assertConsecutive(out: string[], last: number, what: string): void {
  assert.ok(out.length > 0, `${what}: no lines`);
  const first = Number(/^line (\d+)$/.exec(out[0]!)?.[1]);
  assert.deepEqual(
    out,
    Array.from({ length: last - first + 1 }, (_, i) => `line ${first + i}`),
    `${what}: lines out of order, missing or repeated`,
  );
}

/** Entries json-file keeps on disk for a container, across the current, rotated and gzipped files. */
function jsonEntriesOnDisk(dir: string, id: string): number {
  let n = 0;
  for (const f of readdirSync(dir).filter((f) => f.startsWith(`${id}-json.log`))) {
    const raw = readFileSync(join(dir, f));
    n += lines((f.endsWith('.gz') ? gunzipSync(raw) : raw).toString()).length;
  }
  return n;
}

describe('logging: json-file with daemon --log-opt max-size/max-file', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon({ args: ['--log-opt', 'max-size=1k', '--log-opt', 'max-file=3'] });
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('rotation keeps max-file files; docker logs returns everything on disk, in order; inspect shows LogPath and LogConfig', async () => {
    const name = `rot-${rand()}`;
    ok(await d.docker(['run', '--name', name, 'busybox', 'sh', '-c', numbered(300)]));
    const i = await inspect(d, name);
    const dir = join(d.dataRoot, 'containers', i.Id);
    assert.equal(i.LogPath, join(dir, `${i.Id}-json.log`));
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'json-file', Config: { 'max-size': '1k', 'max-file': '3' } });
    const files = readdirSync(dir)
      .filter((f) => f.startsWith(`${i.Id}-json.log`))
      .sort();
    assert.deepEqual(files, [`${i.Id}-json.log`, `${i.Id}-json.log.1`, `${i.Id}-json.log.2`]);
    for (const f of files.slice(1)) assert.ok(statSync(join(dir, f)).size <= 1000 + 100, `${f} is about max-size`);
    const out = lines(ok(await d.docker(['logs', name])));
    assertConsecutive(out, 299, 'docker logs');
    assert.ok(out.length < 300, 'the oldest lines were rotated away');
    assert.equal(out.length, jsonEntriesOnDisk(dir, i.Id));
  });

  test('compress=true gzips rotated files and docker logs still reads them', async () => {
    const name = `gz-${rand()}`;
    ok(await d.docker(['run', '--name', name, '--log-opt', 'compress=true', 'busybox', 'sh', '-c', numbered(300)]));
    const i = await inspect(d, name);
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'json-file', Config: { 'max-size': '1k', 'max-file': '3', compress: 'true' } });
    const dir = join(d.dataRoot, 'containers', i.Id);
    await until(
      'rotated files compressed',
      () => {
        const files = readdirSync(dir)
          .filter((f) => f.startsWith(`${i.Id}-json.log`))
          .sort();
        return files.join(',') === [`${i.Id}-json.log`, `${i.Id}-json.log.1.gz`, `${i.Id}-json.log.2.gz`].join(',') ? files : undefined;
      },
      5000,
    );
    const out = lines(ok(await d.docker(['logs', name])));
    assertConsecutive(out, 299, 'docker logs (compressed)');
    assert.equal(out.length, jsonEntriesOnDisk(dir, i.Id));
  });

  test('logs -f keeps following across rotations: every line once, in order', async () => {
    const name = `follow-${rand()}`;
    const total = 1500;
    ok(await d.docker(['run', '-d', '--name', name, 'busybox', 'sh', '-c', `sleep 1; ${numbered(total, 10)}`]));
    const followed = await d.docker(['logs', '-f', name], { timeoutMs: 60_000 });
    const out = lines(ok(followed, 'logs -f'));
    assert.equal(out.length, total, `received ${out.length} of ${total} lines`);
    assertConsecutive(out, total - 1, 'logs -f');
    assert.equal(out[0], 'line 0');
    const id = (await inspect(d, name)).Id;
    assert.ok(existsSync(join(d.dataRoot, 'containers', id, `${id}-json.log.2`)), 'rotation happened while following');
  });

  test('labels and env log-opts store the selected attributes with each json-file entry', async () => {
    const name = `attrs-${rand()}`;
    ok(
      await d.docker([
        'run',
        '--name',
        name,
        '--label',
        'team=blue',
        '--label',
        'other=x',
        '-e',
        'APP=shop',
        '-e',
        'SECRET=no',
        '--log-opt',
        'labels=team',
        '--log-opt',
        'env=APP',
        'busybox',
        'echo',
        'tagged',
      ]),
    );
    const i = await inspect(d, name);
    const entry = JSON.parse(readFileSync(i.LogPath, 'utf8').split('\n')[0]!);
    assert.equal(entry.log, 'tagged\n');
    assert.equal(entry.stream, 'stdout');
    assert.deepEqual(entry.attrs, { team: 'blue', APP: 'shop' });
    assert.equal(ok(await d.docker(['logs', name])), 'tagged\n');
  });

  test('--tail, --since, --until and --timestamps', async () => {
    const name = `tail-${rand()}`;
    ok(
      await d.docker([
        'run',
        '--name',
        name,
        '--log-opt',
        'max-size=1m',
        'busybox',
        'sh',
        '-c',
        'for i in 1 2 3 4 5; do echo t$i; done; sleep 1.5; echo late',
      ]),
    );
    assert.equal(ok(await d.docker(['logs', '--tail', '3', name])), 't4\nt5\nlate\n');
    assert.equal(ok(await d.docker(['logs', '--tail', '0', name])), '');
    const stamped = lines(ok(await d.docker(['logs', '--timestamps', name])));
    assert.equal(stamped.length, 6);
    for (const l of stamped) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{1,9}Z t?\d*\w*$/);
    const lateAt = Date.parse(stamped[5]!.split(' ')[0]!.replace(/(\.\d{3})\d*Z$/, '$1Z'));
    const t5At = Date.parse(stamped[4]!.split(' ')[0]!.replace(/(\.\d{3})\d*Z$/, '$1Z'));
    assert.ok(lateAt - t5At > 1000);
    const cut = new Date((lateAt + t5At) / 2).toISOString();
    assert.equal(ok(await d.docker(['logs', '--since', cut, name])), 'late\n');
    assert.equal(ok(await d.docker(['logs', '--until', cut, name])), 't1\nt2\nt3\nt4\nt5\n');
  });

  test('the local driver stores and reads logs; LogPath stays empty as in dockerd', async () => {
    const name = `local-${rand()}`;
    ok(await d.docker(['run', '--name', name, '--log-driver', 'local', 'busybox', 'sh', '-c', 'echo out; echo err >&2']));
    const i = await inspect(d, name);
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'local', Config: {} });
    assert.equal(i.LogPath, '');
    assert.ok(existsSync(join(d.dataRoot, 'containers', i.Id, 'local-logs', 'container.log')));
    const r = await d.docker(['logs', name]);
    assert.equal(ok(r), 'out\n');
    assert.equal(r.stderr, 'err\n');
  });

  test('the none driver keeps nothing: docker logs fails as with dockerd (501)', async () => {
    const name = `none-${rand()}`;
    const run = await d.docker(['run', '--name', name, '--log-driver', 'none', 'busybox', 'echo', 'live-only']);
    assert.equal(ok(run), 'live-only\n', 'attached output still flows');
    const i = await inspect(d, name);
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'none', Config: {} });
    assert.equal(i.LogPath, '');
    const logs = await d.docker(['logs', name]);
    assert.equal(logs.code, 1);
    assert.match(logs.stderr, /^Error response from daemon: configured logging driver does not support reading$/m);
    const raw = await d.request('GET', `/containers/${name}/logs?stdout=1`);
    assert.equal(raw.status, 501);
    assert.equal(raw.json().message, 'configured logging driver does not support reading');
  });

  test('logs are readable after a daemon restart (json-file, rotated+gzipped, local)', async () => {
    const plain = `keep-${rand()}`;
    const gz = `keepgz-${rand()}`;
    const local = `keeplocal-${rand()}`;
    ok(await d.docker(['run', '--name', plain, 'busybox', 'sh', '-c', 'echo one; echo two']));
    ok(await d.docker(['run', '--name', gz, '--log-opt', 'compress=true', 'busybox', 'sh', '-c', numbered(200)]));
    ok(await d.docker(['run', '--name', local, '--log-driver', 'local', 'busybox', 'echo', 'local-kept']));
    const before = lines(ok(await d.docker(['logs', gz])));
    await d.stop();
    await d.restart();
    assert.equal(ok(await d.docker(['logs', plain])), 'one\ntwo\n');
    assert.deepEqual(lines(ok(await d.docker(['logs', gz]))), before);
    assertConsecutive(before, 199, 'gzipped logs after restart');
    assert.equal(ok(await d.docker(['logs', local])), 'local-kept\n');
  });
});

describe('logging: daemon --log-driver local with --log-opt, per-container overrides', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon({ args: ['--log-driver', 'local', '--log-opt', 'max-size=10k', '--log-opt', 'max-file=2'] });
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  test('the daemon default driver and options apply to new containers', async () => {
    assert.equal(ok(await d.docker(['info', '--format', '{{.LoggingDriver}}'])).trim(), 'local');
    const name = `dflt-${rand()}`;
    ok(await d.docker(['run', '--name', name, 'busybox', 'echo', 'by-default']));
    const i = await inspect(d, name);
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'local', Config: { 'max-size': '10k', 'max-file': '2' } });
    assert.ok(existsSync(join(d.dataRoot, 'containers', i.Id, 'local-logs', 'container.log')));
    assert.ok(!existsSync(join(d.dataRoot, 'containers', i.Id, `${i.Id}-json.log`)));
    assert.equal(ok(await d.docker(['logs', name])), 'by-default\n');
    const info = await d.docker(['info']);
    assert.doesNotMatch(info.stderr, /log-(driver|opts) is set but not built yet/);
  });

  test('local rotation with the daemon options: logs still contiguous', async () => {
    const name = `lrot-${rand()}`;
    ok(await d.docker(['run', '--name', name, 'busybox', 'sh', '-c', numbered(3000)]));
    const i = await inspect(d, name);
    const files = readdirSync(join(d.dataRoot, 'containers', i.Id, 'local-logs')).sort();
    assert.deepEqual(files, ['container.log', 'container.log.1.gz'], 'max-file=2, compressed by default');
    const out = lines(ok(await d.docker(['logs', name])));
    assertConsecutive(out, 2999, 'local logs');
    assert.ok(out.length < 3000);
  });

  test('a per-container --log-opt merges with the daemon options; --log-driver replaces them', async () => {
    const merged = `merged-${rand()}`;
    ok(await d.docker(['run', '--name', merged, '--log-opt', 'max-file=4', 'busybox', 'echo', 'm']));
    assert.deepEqual((await inspect(d, merged)).HostConfig.LogConfig, { Type: 'local', Config: { 'max-size': '10k', 'max-file': '4' } });
    const json = `json-${rand()}`;
    ok(await d.docker(['run', '--name', json, '--log-driver', 'json-file', '--log-opt', 'max-size=2k', 'busybox', 'echo', 'j']));
    const i = await inspect(d, json);
    assert.deepEqual(i.HostConfig.LogConfig, { Type: 'json-file', Config: { 'max-size': '2k' } });
    assert.equal(i.LogPath, join(d.dataRoot, 'containers', i.Id, `${i.Id}-json.log`));
    assert.ok(existsSync(i.LogPath));
    assert.equal(ok(await d.docker(['logs', json])), 'j\n');
    const bad = await d.docker(['run', '--rm', '--log-driver', 'json-file', '--log-opt', 'max-file=x', 'busybox', 'true']);
    assert.equal(bad.code, 125);
    assert.match(bad.stderr, /strconv\.Atoi: parsing "x": invalid syntax/);
  });
});
