// Runtime defaults dockerd applies and HostConfig fields it honours, through the real docker CLI:
// OOMKilled only for a real OOM kill, MaskedPaths/ReadonlyPaths null (defaults) vs [] (none), the
// default network sysctls, the NIS domain name, an attached exec's stdin half-close, VolumesFrom,
// and what a kill means for the restart policy.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { testClient } from '../helpers/cli-client.ts';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

describe('runtime defaults and HostConfig fields', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => d?.cleanup());

  async function inspect(name: string): Promise<Record<string, any>> {
    const r = await d.request('GET', `/containers/${name}/json`);
    assert.equal(r.status, 200, r.text());
    return r.json();
  }

  async function out(args: string[]): Promise<string> {
    const r = await d.docker(args);
    assert.equal(r.code, 0, r.stderr);
    return r.stdout;
  }

  test('OOMKilled is false after a normal exit and true (with an oom event) after a real OOM kill', async () => {
    const since = Math.floor(Date.now() / 1000) - 1;
    assert.equal((await d.docker(['run', '--name', 'exits', 'busybox', 'true'])).code, 0);
    assert.equal((await out(['inspect', '-f', '{{.State.OOMKilled}}', 'exits'])).trim(), 'false');
    const s = (await inspect('exits')).State;
    assert.ok(s.StartedAt <= s.FinishedAt, `StartedAt ${s.StartedAt} after FinishedAt ${s.FinishedAt}`);
    const oom = await d.docker([
      'run',
      '--name',
      'ooms',
      '-m',
      '8m',
      '--memory-swap',
      '8m',
      'busybox',
      'sh',
      '-c',
      'x=aaaaaaaaaaaaaaaa; while true; do x=$x$x; done',
    ]);
    assert.equal(oom.code, 137, oom.stderr);
    assert.equal((await out(['inspect', '-f', '{{.State.OOMKilled}}', 'ooms'])).trim(), 'true');
    const events = await out([
      'events',
      '--since',
      String(since),
      '--until',
      String(Math.ceil(Date.now() / 1000) + 1),
      '--filter',
      'event=oom',
      '--format',
      '{{.Actor.Attributes.name}}',
    ]);
    assert.deepEqual(events.trim().split('\n'), ['ooms']);
    await d.docker(['rm', 'exits', 'ooms']);
  });

  test('MaskedPaths/ReadonlyPaths: unset is stored as the defaults, [] masks nothing, privileged has none', async () => {
    const probe = ['sh', '-c', 'wc -c < /proc/timer_list; grep -c " /proc/sys proc ro" /proc/mounts || true'];
    const none = await d.request('POST', '/containers/create?name=unmasked', {
      body: { Image: 'busybox', Cmd: probe, HostConfig: { MaskedPaths: [], ReadonlyPaths: [] } },
    });
    assert.equal(none.status, 201, none.text());
    const dflt = await d.request('POST', '/containers/create?name=masked', {
      body: { Image: 'busybox', Cmd: probe, HostConfig: { MaskedPaths: null, ReadonlyPaths: null } },
    });
    assert.equal(dflt.status, 201, dflt.text());
    const u = (await inspect('unmasked')).HostConfig;
    assert.deepEqual([u.MaskedPaths, u.ReadonlyPaths], [[], []]);
    const m = (await inspect('masked')).HostConfig;
    assert.ok(m.MaskedPaths.includes('/proc/timer_list') && m.MaskedPaths.includes('/proc/kcore'), JSON.stringify(m.MaskedPaths));
    assert.deepEqual(m.ReadonlyPaths, ['/proc/bus', '/proc/fs', '/proc/irq', '/proc/sys', '/proc/sysrq-trigger']);
    // Applied: /proc/timer_list is /dev/null (0 bytes) when masked; /proc/sys a read-only mount.
    const [maskedSize, maskedRo] = (await out(['start', '-a', 'masked'])).trim().split('\n');
    assert.equal(maskedSize, '0');
    assert.equal(maskedRo, '1');
    const [openSize, openRo] = (await out(['start', '-a', 'unmasked'])).trim().split('\n');
    assert.ok(Number(openSize) > 0, `timer_list read ${openSize} bytes unmasked`);
    assert.equal(openRo, '0');
    await out(['create', '--name', 'priv', '--privileged', 'busybox', 'true']);
    const p = (await inspect('priv')).HostConfig;
    assert.deepEqual([p.MaskedPaths, p.ReadonlyPaths], [null, null]);
    await d.docker(['rm', 'masked', 'unmasked', 'priv']);
  });

  test('inspect keeps null and [] apart for list fields, every HostConfig field present', async () => {
    const r = await d.request('POST', '/containers/create?name=lists', {
      body: { Image: 'busybox', Cmd: ['true'], HostConfig: { CapAdd: [], Dns: null } },
    });
    assert.equal(r.status, 201, r.text());
    const hc = (await inspect('lists')).HostConfig;
    assert.deepEqual(hc.CapAdd, []);
    assert.equal(hc.CapDrop, null);
    assert.equal(hc.Dns, null);
    assert.equal(hc.PidsLimit, null);
    assert.equal(hc.ContainerIDFile, '');
    assert.ok(!('Init' in hc) && !('Mounts' in hc) && !('Tmpfs' in hc), 'omitempty fields left out when unset');
    // The docker CLI decodes inspect into Go's types, whose nil list prints "[]". Not for the engine
    // client: its templates read the API's JSON as maps (no Go types), where null prints "<no value>".
    if (testClient() === 'docker') assert.equal((await out(['inspect', '-f', '{{.HostConfig.CapDrop}}', 'lists'])).trim(), '[]');
    // The docker CLI sends PidsLimit 0 and no OomKillDisable: stored as unset and false (cgroup v1).
    await out(['create', '--name', 'cli-made', '--pids-limit', '-1', 'busybox', 'true']);
    const cli = (await inspect('cli-made')).HostConfig;
    assert.deepEqual([cli.PidsLimit, cli.OomKillDisable, cli.MemorySwap], [null, false, 0]);
    await out(['create', '--name', 'cli-mem', '-m', '32m', 'busybox', 'true']);
    assert.equal((await inspect('cli-mem')).HostConfig.MemorySwap, 64 << 20);
    await d.docker(['rm', 'cli-made', 'cli-mem']);
    // --entrypoint "" (sent as [""]) resets the entrypoint: stored as null, the command runs alone.
    assert.equal(await out(['run', '--name', 'noentry', '--entrypoint', '', 'busybox', 'echo', 'hi']), 'hi\n');
    assert.equal((await inspect('noentry')).Config.Entrypoint, null);
    await d.docker(['rm', 'noentry']);
    await d.docker(['rm', 'lists']);
  });

  test('KernelMemoryTCP (API only) is stored and handed to the runtime as memory.kernelTCP', async () => {
    const r = await d.request('POST', '/containers/create?name=kmemtcp', {
      body: { Image: 'busybox', Cmd: ['sleep', '30'], HostConfig: { KernelMemoryTCP: 16 << 20 } },
    });
    assert.equal(r.status, 201, r.text());
    const id = r.json().Id as string;
    assert.equal((await inspect('kmemtcp')).HostConfig.KernelMemoryTCP, 16 << 20);
    // /info says the host can (cgroup v1 with the kmem.tcp file, as this host).
    const info = (await d.request('GET', '/info')).json();
    assert.equal(info.KernelMemoryTCP, existsSync('/sys/fs/cgroup/memory/memory.kmem.tcp.limit_in_bytes'));
    await out(['start', 'kmemtcp']);
    // runc 1.1 ignores kernel memory settings (as under dockerd on this host): the bundle is what we own.
    const bundle = join(d.execRoot, 'containerd/io.containerd.runtime.v2.task/engine', id, 'config.json');
    const spec = JSON.parse(readFileSync(bundle, 'utf8'));
    assert.equal(spec.linux.resources.memory.kernelTCP, 16 << 20);
    await d.docker(['rm', '-f', 'kmemtcp']);
  });

  test('resource and process fields without another end-to-end test reach the container', async () => {
    const script = [
      'cat /proc/self/oom_score_adj',
      'id -G',
      'pwd',
      'cat /sys/fs/cgroup/cpuset/cpuset.cpus',
      'cat /sys/fs/cgroup/memory/memory.soft_limit_in_bytes /sys/fs/cgroup/memory/memory.swappiness',
      'grep oom_kill_disable /sys/fs/cgroup/memory/memory.oom_control',
      'cat /sys/fs/cgroup/cpu/cpu.cfs_period_us /sys/fs/cgroup/cpu/cpu.cfs_quota_us',
    ].join('; ');
    const r = await out([
      'run',
      '--rm',
      '--oom-score-adj',
      '123',
      '--group-add',
      '1234',
      '-w',
      '/tmp',
      '--cpuset-cpus',
      '0',
      '-m',
      '128m',
      '--memory-reservation',
      '64m',
      '--memory-swappiness',
      '10',
      '--oom-kill-disable',
      '--cpu-period',
      '50000',
      '--cpu-quota',
      '25000',
      'busybox',
      'sh',
      '-c',
      script,
    ]);
    assert.deepEqual(r.trim().split('\n'), ['123', '0 1234', '/tmp', '0', String(64 << 20), '10', 'oom_kill_disable 1', '50000', '25000']);
  });

  test('--uts host, --device and --annotation', async () => {
    assert.equal(await out(['run', '--rm', '--uts', 'host', 'busybox', 'hostname']), `${hostname()}\n`);
    assert.equal(
      await out(['run', '--rm', '--device', '/dev/zero:/dev/myzero:r', 'busybox', 'stat', '-c', '%F %t %T', '/dev/myzero']),
      'character special file 1 5\n',
    );
    const id = (await out(['run', '-d', '--annotation', 'org.example.note=hello', 'busybox', 'sleep', '30'])).trim();
    const bundle = join(d.execRoot, 'containerd/io.containerd.runtime.v2.task/engine', id, 'config.json');
    assert.deepEqual(JSON.parse(readFileSync(bundle, 'utf8')).annotations, { 'org.example.note': 'hello' });
    assert.deepEqual((await inspect(id)).HostConfig.Annotations, { 'org.example.note': 'hello' });
    await d.docker(['rm', '-f', id]);
  });

  test('the default network sysctls: own network namespace only, a user-set value wins', async () => {
    const cat = ['cat', '/proc/sys/net/ipv4/ip_unprivileged_port_start', '/proc/sys/net/ipv4/ping_group_range'];
    assert.equal(await out(['run', '--rm', 'busybox', ...cat]), '0\n0\t2147483647\n');
    assert.equal(await out(['run', '--rm', '--network', 'none', 'busybox', ...cat]), '0\n0\t2147483647\n');
    const user = await out(['run', '--rm', '--sysctl', 'net.ipv4.ip_unprivileged_port_start=500', 'busybox', ...cat]);
    assert.equal(user, '500\n0\t2147483647\n');
    // The host's network namespace keeps the host's values.
    const host = ['/proc/sys/net/ipv4/ip_unprivileged_port_start', '/proc/sys/net/ipv4/ping_group_range']
      .map((f) => readFileSync(f, 'utf8'))
      .join('');
    assert.equal(await out(['run', '--rm', '--network', 'host', 'busybox', ...cat]), host);
    // An unprivileged user may bind a port below 1024.
    assert.equal(
      await out(['run', '--rm', '--user', '1000', 'busybox', 'sh', '-c', 'nc -l -p 80 & sleep 0.3; netstat -ltn | grep -c ":80 "']),
      '1\n',
    );
  });

  test('Config.Domainname is the NIS domain name of the container', async () => {
    const r = await out([
      'run',
      '--rm',
      '--domainname',
      'example.com',
      '--hostname',
      'web',
      'busybox',
      'sh',
      '-c',
      'cat /proc/sys/kernel/domainname; hostname',
    ]);
    assert.equal(r, 'example.com\nweb\n');
    assert.equal(await out(['run', '--rm', 'busybox', 'cat', '/proc/sys/kernel/domainname']), '(none)\n');
  });

  test('an attached exec whose client half-closes at once (no input) sees EOF and ends', async () => {
    await out(['run', '-d', '--name', 'execbox', 'busybox', 'sleep', '1000']);
    for (let i = 0; i < 3; i++) {
      const r = await d.docker(['exec', '-i', 'execbox', 'sh', '-c', 'cat; echo eof'], { input: '', timeoutMs: 15_000 });
      assert.equal(r.code, 0, `exec -i with empty stdin did not end (run ${i}): ${r.stderr}`);
      assert.equal(r.stdout, 'eof\n');
    }
    const r = await d.docker(['exec', '-i', 'execbox', 'cat'], { input: 'hi\n', timeoutMs: 15_000 });
    assert.equal(r.stdout, 'hi\n');
    await d.docker(['rm', '-f', 'execbox']);
  });

  test("--volumes-from: the donor's volumes and binds, ro when asked, own mounts win, bad entries 400", async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-volfrom-'));
    try {
      await writeFile(join(dir, 'host.txt'), 'from-host\n');
      await out([
        'run',
        '--name',
        'donor',
        '-v',
        'vf-named:/named',
        '-v',
        `${dir}:/hostdir`,
        'busybox',
        'sh',
        '-c',
        'echo from-donor > /named/f',
      ]);
      // Reads both, writes to the volume through the inherited mount.
      const r = await out([
        'run',
        '--rm',
        '--volumes-from',
        'donor',
        'busybox',
        'sh',
        '-c',
        'cat /named/f /hostdir/host.txt; echo more >> /named/f',
      ]);
      assert.equal(r, 'from-donor\nfrom-host\n');
      assert.equal(await out(['run', '--rm', '-v', 'vf-named:/v', 'busybox', 'cat', '/v/f']), 'from-donor\nmore\n');
      // docker cp sees the inherited volume too.
      await out(['create', '--name', 'cpjoin', '--volumes-from', 'donor', 'busybox', 'true']);
      const copied = await d.request('GET', '/containers/cpjoin/archive?path=/named/f');
      assert.equal(copied.status, 200, copied.text());
      assert.ok(copied.body.includes('from-donor\nmore\n'), "the archive holds the volume's file");
      // :ro makes every inherited mount read-only, and inspect says so.
      await out(['create', '--name', 'reader', '--volumes-from', 'donor:ro', 'busybox', 'sh', '-c', 'touch /named/x 2>&1 || echo refused']);
      const mounts = (await inspect('reader')).Mounts as Array<{ Destination: string; RW: boolean; Type: string; Name?: string }>;
      assert.deepEqual(mounts.map((m) => [m.Destination, m.Type, m.RW]).sort(), [
        ['/hostdir', 'bind', false],
        ['/named', 'volume', false],
      ]);
      assert.match(await out(['start', '-a', 'reader']), /Read-only file system[\s\S]*refused|refused/);
      // The container's own mount at the same destination wins.
      const own = await out(['run', '--rm', '--volumes-from', 'donor', '--tmpfs', '/x', '-v', `${dir}:/named`, 'busybox', 'ls', '/named']);
      assert.equal(own, 'host.txt\n');
      // An empty inherited volume is not filled from the image, even where the image (here the
      // request) declares a volume: /etc/passwd does not appear in it.
      await out(['create', '--name', 'empty-donor', '--mount', 'type=volume,src=vf-empty,dst=/etc,volume-nocopy', 'busybox', 'true']);
      const joiner = await d.request('POST', '/containers/create?name=joiner', {
        body: { Image: 'busybox', Cmd: ['true'], Volumes: { '/etc': {} }, HostConfig: { VolumesFrom: ['empty-donor'] } },
      });
      assert.equal(joiner.status, 201, joiner.text());
      await out(['start', '-a', 'joiner']);
      assert.doesNotMatch(await out(['run', '--rm', '-v', 'vf-empty:/v', 'busybox', 'ls', '/v']), /passwd/);
      assert.equal((await inspect('joiner')).Mounts.length, 1, 'no anonymous volume beside the inherited one');
      // The volume is in use by the containers that inherited it.
      assert.notEqual((await d.docker(['volume', 'rm', 'vf-named'])).code, 0);
      const missing = await d.request('POST', '/containers/create', {
        body: { Image: 'busybox', HostConfig: { VolumesFrom: ['nosuch'] } },
      });
      assert.equal(missing.status, 400, missing.text());
      assert.match(missing.json().message, /No such container: nosuch/);
      const badMode = await d.request('POST', '/containers/create', {
        body: { Image: 'busybox', HostConfig: { VolumesFrom: ['donor:rshared'] } },
      });
      assert.equal(badMode.status, 400);
      assert.equal(badMode.json().message, 'invalid mode: rshared');
    } finally {
      await d.docker(['rm', '-f', 'donor', 'reader', 'empty-donor', 'joiner', 'cpjoin']);
      await d.docker(['volume', 'rm', 'vf-named', 'vf-empty']);
      await rm(dir, { recursive: true, force: true });
    }
  });

  test("container:<name> namespace modes are stored with the other container's ID", async () => {
    const id = (await out(['run', '-d', '--name', 'nsdonor', '--ipc', 'shareable', 'busybox', 'sleep', '100'])).trim();
    await out([
      'create',
      '--name',
      'nsjoiner',
      '--network',
      'container:nsdonor',
      '--pid',
      'container:nsdonor',
      '--ipc',
      'container:nsdonor',
      'busybox',
      'true',
    ]);
    const hc = (await inspect('nsjoiner')).HostConfig;
    assert.deepEqual([hc.NetworkMode, hc.PidMode, hc.IpcMode], [`container:${id}`, `container:${id}`, `container:${id}`]);
    // Still joins after the donor is renamed.
    await out(['rename', 'nsdonor', 'nsdonor2']);
    assert.equal((await d.docker(['start', 'nsjoiner'])).code, 0);
    await d.docker(['rm', '-f', 'nsjoiner', 'nsdonor2']);
  });

  test('kill and the restart policy: SIGKILL or the own stop signal end restarts; another signal only stops unless-stopped', async () => {
    const restarts = async (name: string) => (await inspect(name)).RestartCount as number;
    const started = async (name: string) => {
      await until(`${name} running`, async () => ((await inspect(name)).State.Running ? true : undefined));
    };
    // PID 1 ignores signals it has no handler for: the shell traps the user signals and exits.
    const body = ['busybox', 'sh', '-c', 'trap "exit 7" USR1 USR2; while :; do sleep 0.1; done'];
    await out(['run', '-d', '--name', 'k-default', '--restart', 'always', ...body]);
    await out(['run', '-d', '--name', 'k-own', '--restart', 'always', '--stop-signal', 'SIGUSR1', ...body]);
    await out(['run', '-d', '--name', 'k-other-us', '--restart', 'unless-stopped', '--stop-signal', 'SIGUSR1', ...body]);
    await out(['run', '-d', '--name', 'k-other-always', '--restart', 'always', '--stop-signal', 'SIGUSR1', ...body]);
    for (const n of ['k-default', 'k-own', 'k-other-us', 'k-other-always']) await started(n);
    await out(['kill', 'k-default']);
    await out(['kill', '--signal', 'SIGUSR1', 'k-own']);
    await out(['kill', '--signal', 'SIGUSR2', 'k-other-us']);
    await out(['kill', '--signal', 'SIGUSR2', 'k-other-always']);
    // always with another signal restarts (the positive control for the waits below).
    await until('k-other-always restarted', async () => ((await restarts('k-other-always')) >= 1 ? true : undefined), 20_000);
    await new Promise((r) => setTimeout(r, 1500)); // well past the first backoff (100 ms)
    for (const [n, code] of [
      ['k-default', 137],
      ['k-own', 7],
      ['k-other-us', 7],
    ] as const) {
      const i = await inspect(n);
      assert.equal(i.State.Status, 'exited', `${n}: ${i.State.Status}`);
      assert.equal(i.State.ExitCode, code, n);
      assert.equal(i.RestartCount, 0, `${n} restarted`);
    }
    // A container waiting out its restart backoff: the kill cancels the restart (dockerd's ExitOnNext).
    await out(['run', '-d', '--name', 'k-backoff', '--restart', 'always', 'busybox', 'sh', '-c', 'exit 3']);
    // After a few quick exits the backoff is over a second, long enough to catch it waiting.
    await until('k-backoff restarted a few times', async () => ((await restarts('k-backoff')) >= 4 ? true : undefined), 30_000);
    await until('k-backoff waiting to restart', async () => ((await inspect('k-backoff')).State.Restarting ? true : undefined), 30_000, 20);
    const count = await restarts('k-backoff');
    assert.equal((await d.request('POST', '/containers/k-backoff/kill')).status, 204);
    await new Promise((r) => setTimeout(r, 3500)); // past the pending backoff
    const backoff = await inspect('k-backoff');
    assert.equal(backoff.State.Status, 'exited');
    assert.ok(backoff.RestartCount <= count + 1, `restarted after the kill: ${count} → ${backoff.RestartCount}`);
    // A start from the API clears it: the policy applies again afterwards.
    await out(['start', 'k-other-us']);
    await started('k-other-us');
    await d.docker(['rm', '-f', 'k-default', 'k-own', 'k-other-us', 'k-other-always', 'k-backoff']);
  });
});
