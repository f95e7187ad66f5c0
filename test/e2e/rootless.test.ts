// Issue 14 item 8, rootless mode: a non-root test user starts bin/engined from a login shell (Debian's
// default user PATH, without /usr/sbin: the host tools are found anyway), which goes through
// bin/engined-rootless into rootlesskit (slirp4netns, builtin port driver); the daemon, its
// containerd and runc run as that user. `docker run --rm busybox true` works, a published port
// answers on the host, resource limits are refused (cgroups are not delegated on cgroup v1), and
// /info shows name=rootless. Needs the Debian packages rootlesskit, slirp4netns and uidmap.
//
// Host state the test touches and restores: the user engine-rl-test (created with its subordinate
// ranges when missing, removed after), and /dev/net/tun's mode when it is not the usual 0666
// (slirp4netns opens it as the user; set back afterwards).
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { get } from 'node:http';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { httpOverUnix, run } from '../helpers/daemon.ts';
import { freePort } from '../helpers/ports.ts';
import { RootlessDaemon } from '../helpers/rootless-daemon.ts';
import { until } from '../helpers/until.ts';

const USER = 'engine-rl-test';
const missing = ['rootlesskit', 'slirp4netns', 'newuidmap'].filter(
  (c) => !['/usr/bin', '/usr/sbin', '/bin'].some((d) => existsSync(join(d, c))),
);

function httpGet(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    get({ host: '127.0.0.1', port, path: '/index.html', timeout: 5000 }, (res) => {
      let body = '';
      res.on('data', (c) => (body += c));
      res.on('end', () => resolve(body));
    })
      .on('error', reject)
      .on('timeout', function (this: { destroy(e: Error): void }) {
        this.destroy(new Error('timeout'));
      });
  });
}

describe(
  'rootless',
  { skip: missing.length ? `missing ${missing.join(', ')} (Debian packages rootlesskit, slirp4netns, uidmap)` : false },
  () => {
    const rl = new RootlessDaemon(USER, 'engine-t-rootless-');

    before(async () => {
      await rl.prepare();
      for (const f of ['/etc/subuid', '/etc/subgid']) {
        assert.match(await readFile(f, 'utf8').catch(() => ''), new RegExp(`^${USER}:`, 'm'), `${USER} needs ranges in ${f}`);
      }
      // Started as the user from a login shell, as a person would: Debian's default user PATH
      // (/etc/login.defs, /etc/profile) has no /usr/sbin or /sbin, where iptables* and ip live.
      const loginPath = await run('runuser', ['-l', USER, '-c', 'printf %s "$PATH"']);
      assert.equal(loginPath.code, 0, loginPath.stderr);
      assert.doesNotMatch(loginPath.stdout, /(^|:)\/(usr\/)?sbin(:|$)/, `the login PATH of ${USER} (the case this test is about)`);
      await rl.start([], { name: 'docker.io/library/busybox:latest' });
    });

    after(() => rl.cleanup());

    test('the daemon runs as the user, with data and socket under the XDG directories', async () => {
      const pid = Number(readFileSync(join(rl.dir, 'run', 'engine.pid'), 'utf8'));
      const uids = readFileSync(`/proc/${pid}/status`, 'utf8').match(/^Uid:\s+(\d+)/m)?.[1];
      assert.equal(Number(uids), rl.uid);
      // Its children find the host tools: the sbin directories were added to the login PATH.
      const path = readFileSync(`/proc/${pid}/environ`, 'utf8')
        .split('\0')
        .find((e) => e.startsWith('PATH='));
      assert.match(path ?? '', /(^|:)\/usr\/sbin(:|$)/, `the daemon's ${path}`);
      const info = (await httpOverUnix(rl.socket, 'GET', '/v1.51/info')).json();
      assert.equal(info.DockerRootDir, join(rl.dir, 'data', 'engine'));
      assert.ok(info.SecurityOptions.includes('name=rootless'), JSON.stringify(info.SecurityOptions));
      assert.ok(
        info.Warnings.some((w: string) => /rootless.*cgroup/i.test(w)),
        JSON.stringify(info.Warnings),
      );
    });

    test('docker run --rm busybox true, run by the user; the container is inside the user namespace', async () => {
      const r = await rl.asUser(['docker', 'run', '--rm', 'busybox', 'true']);
      assert.equal(r.code, 0, `${r.stderr}\n${rl.output}`);
      const m = await rl.asUser(['docker', 'run', '--rm', 'busybox', 'head', '-1', '/proc/self/uid_map']);
      assert.equal(m.code, 0, m.stderr);
      assert.deepEqual(m.stdout.trim().split(/\s+/), ['0', String(rl.uid), '1']);
    });

    test('a published port answers on the host through the port driver', async () => {
      const port = await freePort();
      const r = await rl.asUser([
        'docker',
        'run',
        '-d',
        '--name',
        'web',
        '-p',
        `${port}:80`,
        'busybox',
        'sh',
        '-c',
        'echo rootless-ok > /tmp/index.html && exec httpd -f -p 80 -h /tmp',
      ]);
      assert.equal(r.code, 0, `${r.stderr}\n${rl.output}`);
      const body = await until('the published port', async () => (await httpGet(port)).trim() || undefined, 20_000, 200);
      assert.equal(body, 'rootless-ok');
      assert.equal((await rl.asUser(['docker', 'rm', '-f', 'web'])).code, 0);
      // Closed on the host again with the container gone.
      await until(
        'the host port to close',
        () =>
          httpGet(port).then(
            () => undefined,
            () => true,
          ),
        20_000,
        200,
      );
    });

    test('resource limits are refused: cgroups are not delegated here', async () => {
      const r = await rl.asUser(['docker', 'run', '--rm', '-m', '64m', 'busybox', 'true']);
      assert.notEqual(r.code, 0);
      assert.match(r.stderr, /cgroup/i);
      assert.match(r.stderr, /Memory/);
    });
  },
);
