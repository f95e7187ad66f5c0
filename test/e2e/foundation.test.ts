// Issue 2: the daemon skeleton driven as a user would — docker CLI version/info, API versioning,
// errors, configuration (validate, conflicts, reload), pidfile, supervisor restart, TLS, fd://.
import assert from 'node:assert/strict';
import { readFile, writeFile, mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ENGINED, run, startDaemon, TestDaemon, killStrayContainerd } from '../helpers/daemon.ts';
import { apiSpecMissing, missingProperties, responseSchema, validate } from '../helpers/openapi.ts';
import { freePort } from '../helpers/ports.ts';
import { makeCerts, tlsDaemonArgs } from '../helpers/tls-certs.ts';
import { until } from '../helpers/until.ts';

describe('engined foundation', () => {
  let d: TestDaemon;
  before(async () => {
    d = await startDaemon({ config: { labels: ['stage=one'], debug: false } });
  });
  after(async () => {
    await d?.cleanup();
  });

  test('docker version talks to the daemon and reports containerd and runc', async () => {
    const r = await d.docker(['version', '--format', '{{json .}}']);
    assert.equal(r.code, 0, r.stderr);
    const v = JSON.parse(r.stdout);
    assert.equal(v.Server.ApiVersion, '1.51');
    assert.equal(v.Server.MinAPIVersion, '1.24');
    const names = v.Server.Components.map((c: { Name: string }) => c.Name);
    assert.ok(names.includes('containerd') && names.includes('runc'), names.join());
    const containerd = v.Server.Components.find((c: { Name: string }) => c.Name === 'containerd');
    assert.match(containerd.Version, /^1\.6\./);
  });

  test('docker info prints the daemon facts', async () => {
    const r = await d.docker(['info']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Server Version: 0\.1\.0/);
    assert.match(r.stdout, /Storage Driver: overlay2/);
    assert.match(r.stdout, /Cgroup Driver: cgroupfs/);
    assert.match(r.stdout, /Default Runtime: runc/);
    assert.match(r.stdout, /stage=one/);
    assert.ok(r.stdout.includes(`Docker Root Dir: ${d.dataRoot}`), r.stdout);
  });

  test('an older client negotiates: DOCKER_API_VERSION=1.41 and /v1.41 paths work', async () => {
    const r = await d.docker(['info', '--format', '{{.ServerVersion}}'], { env: { DOCKER_API_VERSION: '1.41' } });
    assert.equal(r.code, 0, r.stderr);
    assert.equal(r.stdout.trim(), '0.1.0');
    const v = await d.request('GET', '/v1.41/version');
    assert.equal(v.status, 200);
    const unversioned = await d.request('GET', '/version');
    assert.equal(unversioned.status, 200);
  });

  test('a version above the maximum or below the minimum is a 400 naming the range', async () => {
    const hi = await d.request('GET', '/v1.99/version');
    assert.equal(hi.status, 400);
    assert.match(hi.headers['content-type'] ?? '', /application\/json/);
    assert.match(hi.json().message, /client version 1\.99 is too new\. Maximum supported API version is 1\.51/);
    const lo = await d.request('GET', '/v1.12/info');
    assert.equal(lo.status, 400);
    // Below 1.24 dockerd answers in plain text (such clients cannot read its JSON errors).
    assert.match(lo.headers['content-type'] ?? '', /^text\/plain/);
    assert.match(lo.text(), /too old\. Minimum supported API version is 1\.24/);
    const cli = await d.docker(['version'], { env: { DOCKER_API_VERSION: '1.99' } });
    assert.notEqual(cli.code, 0);
    assert.match(cli.stderr, /too new/);
  });

  test('/_ping answers GET and HEAD with the negotiation headers', async () => {
    for (const method of ['GET', 'HEAD']) {
      const r = await d.request(method, '/v1.51/_ping');
      assert.equal(r.status, 200);
      assert.equal(r.headers['api-version'], '1.51');
      assert.equal(r.headers['ostype'], 'linux');
      assert.equal(r.headers['docker-experimental'], 'false');
      assert.equal(r.headers['cache-control'], 'no-cache, no-store, must-revalidate');
      assert.equal(r.text(), method === 'GET' ? 'OK' : '');
    }
  });

  test('unknown paths and wrong methods are JSON errors, never HTML', async () => {
    const r = await d.request('GET', '/v1.51/no/such/thing');
    assert.equal(r.status, 404);
    assert.deepEqual(r.json(), { message: 'page not found' });
    const wrong = await d.request('DELETE', '/v1.51/version');
    assert.equal(wrong.status, 404);
    assert.equal(typeof wrong.json().message, 'string');
    const bad = await d.request('GET', '/v1.x/info');
    assert.equal(bad.status, 400);
    assert.equal(typeof bad.json().message, 'string');
  });

  test('/version and /info conform to the API description', { skip: apiSpecMissing() }, async () => {
    const v = (await d.request('GET', '/v1.51/version')).json();
    assert.deepEqual(validate(v, responseSchema('/version', 'get', '200')), []);
    const info = (await d.request('GET', '/v1.51/info')).json();
    assert.deepEqual(validate(info, responseSchema('/info', 'get', '200')), []);
    // Every field the description lists is present (clients read them), except those of features we lack.
    const absent = missingProperties(info, responseSchema('/info', 'get', '200')).filter(
      (k) => !['ProductLicense', 'DiscoveredDevices'].includes(k),
    );
    assert.deepEqual(absent, []);
  });

  test('SIGHUP reloads debug and labels; a bad file keeps the old configuration serving', async () => {
    await writeFile(d.configFile, JSON.stringify({ labels: ['stage=two', 'x=y'], debug: true }));
    process.kill(d.pid, 'SIGHUP');
    await until('reloaded info', async () => {
      const info = (await d.request('GET', '/info')).json();
      return info.Debug === true && info.Labels.join() === 'stage=two,x=y' ? info : undefined;
    });
    await writeFile(d.configFile, '{"labels": ["broken"');
    process.kill(d.pid, 'SIGHUP');
    await d.waitForOutput(/Error reloading configuration/);
    const info = (await d.request('GET', '/info')).json();
    assert.deepEqual(info.Labels, ['stage=two', 'x=y']);
    assert.equal(info.Debug, true);
    await writeFile(d.configFile, JSON.stringify({ labels: ['stage=one'] }));
    process.kill(d.pid, 'SIGHUP');
    await until('debug off again', async () => ((await d.request('GET', '/info')).json().Debug === false ? true : undefined));
  });

  test('a second daemon on the same pidfile refuses to start', async () => {
    const other = await mkdtemp(join(tmpdir(), 'engine-t-'));
    try {
      const r = await run(
        ENGINED,
        [
          '--data-root',
          join(other, 'data'),
          '--exec-root',
          join(other, 'exec'),
          '--pidfile',
          d.pidfile,
          '-H',
          `unix://${join(other, 's.sock')}`,
        ],
        { timeoutMs: 30_000 },
      );
      assert.equal(r.code, 1);
      assert.match(r.stderr + r.stdout, /pid file found, ensure engine is not running or delete/);
      assert.equal((await readFile(d.pidfile, 'utf8')).trim(), String(d.pid));
    } finally {
      await killStrayContainerd(join(other, 'exec'));
      await rm(other, { recursive: true, force: true });
    }
  });

  test('containerd started by the daemon is restarted when it dies', async () => {
    const find = async () => {
      const r = await run('pgrep', ['-f', `containerd --config ${d.execRoot}/`]);
      const pid = Number(r.stdout.trim().split('\n')[0]);
      return pid > 0 ? pid : undefined;
    };
    const first = await until('containerd pid', find);
    process.kill(first, 'SIGKILL');
    const second = await until('new containerd', async () => {
      const p = await find();
      return p && p !== first ? p : undefined;
    });
    assert.notEqual(second, first);
    await until('version through restarted containerd', async () => {
      const r = await d.request('GET', '/version');
      return r.status === 200 && r.json().Components.some((c: { Name: string }) => c.Name === 'containerd') ? true : undefined;
    });
    await d.waitForOutput(/supervisor|containerd/i);
  });
});

describe('engined configuration at start-up', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'engine-cfg-'));
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  test('--validate accepts a good file and names the file and directives of a bad one', async () => {
    const good = join(dir, 'good.json');
    await writeFile(
      good,
      JSON.stringify({
        debug: true,
        labels: ['a=b'],
        'default-ulimits': { nofile: { Name: 'nofile', Soft: 1024, Hard: 2048 } },
        proxies: { 'http-proxy': 'http://proxy:3128' },
      }),
    );
    const ok = await run(ENGINED, ['--validate', '--config-file', good]);
    assert.equal(ok.code, 0, ok.stderr);
    assert.match(ok.stdout, /configuration OK/);
    const bad = join(dir, 'bad.json');
    await writeFile(bad, JSON.stringify({ debug: true, 'no-such-option': 1, 'another-one': true }));
    const r = await run(ENGINED, ['--validate', '--config-file', bad]);
    assert.equal(r.code, 1);
    assert.ok(r.stderr.includes(bad), r.stderr);
    assert.match(r.stderr, /another-one, no-such-option/);
  });

  test('an option set both as a flag and in the file refuses start-up', async () => {
    const file = join(dir, 'conflict.json');
    await writeFile(file, JSON.stringify({ debug: false }));
    const r = await run(
      ENGINED,
      [
        '--debug',
        '--config-file',
        file,
        '--data-root',
        join(dir, 'd'),
        '--exec-root',
        join(dir, 'e'),
        '--pidfile',
        join(dir, 'p.pid'),
        '-H',
        `unix://${join(dir, 's.sock')}`,
      ],
      { timeoutMs: 30_000 },
    );
    assert.equal(r.code, 1);
    assert.match(r.stderr, /specified both as a flag and in the configuration file: debug/);
  });

  test('-v prints the version', async () => {
    const r = await run(ENGINED, ['-v']);
    assert.equal(r.code, 0);
    assert.match(r.stdout, /^Engine version 0\.1\.0, build \S+/);
  });
});

describe('engined listeners', () => {
  test('TLS with --tlsverify serves the docker CLI with a client certificate and refuses one without', async () => {
    const certDir = await mkdtemp(join(tmpdir(), 'engine-tls-'));
    const certs = await makeCerts(certDir);
    const port = await freePort();
    const d = await startDaemon({ args: tlsDaemonArgs(certs, port) });
    try {
      const ok = await d.docker(['version', '--format', '{{.Server.APIVersion}}'], {
        env: { DOCKER_HOST: `tcp://127.0.0.1:${port}`, DOCKER_TLS_VERIFY: '1', DOCKER_CERT_PATH: certs.clientDir },
      });
      assert.equal(ok.code, 0, `${ok.stderr}\n--- daemon output:\n${d.output}`);
      assert.equal(ok.stdout.trim(), '1.51');
      const ca = await readFile(certs.ca);
      const refused = await new Promise<string>((resolve) => {
        const req = httpsRequest({ host: '127.0.0.1', port, path: '/_ping', ca, servername: 'localhost' }, (res) =>
          resolve(`status ${res.statusCode}`),
        );
        req.on('error', (e) => resolve(`error ${e.message}`));
        req.end();
      });
      assert.match(refused, /^error/);
    } finally {
      await d.cleanup();
      await rm(certDir, { recursive: true, force: true });
    }
  });

  test('a signal during start-up is acted on when start-up ends: SIGTERM stops cleanly, SIGHUP reloads', async () => {
    const containerdOf = async (execRoot: string) =>
      (await run('pgrep', ['-a', '-x', 'containerd'])).stdout.split('\n').filter((l) => l.includes(`${execRoot}/`));
    const stopped = await startDaemon({ waitReady: false });
    try {
      await stopped.waitForOutput(/msg="Starting up"/);
      stopped.child.kill('SIGTERM'); // containerd is being spawned, the daemon's modules are loading
      assert.equal(await stopped.exited, 0, stopped.output);
      assert.match(stopped.output, /msg="Processing signal" signal=terminated/);
      assert.match(stopped.output, /msg="Daemon shutdown complete"/);
      assert.deepEqual(await containerdOf(stopped.execRoot), [], 'no containerd left running');
      await assert.rejects(readFile(stopped.pidfile), /ENOENT/);
    } finally {
      await stopped.cleanup();
    }
    const reloaded = await startDaemon({ waitReady: false });
    try {
      await reloaded.waitForOutput(/msg="Starting up"/);
      reloaded.child.kill('SIGHUP'); // Node's default for SIGHUP would end the process
      await reloaded.waitReady();
      await reloaded.waitForOutput(/msg="Reloaded configuration"/);
      assert.equal((await reloaded.request('GET', '/_ping')).text(), 'OK');
    } finally {
      await reloaded.cleanup();
    }
  });

  test('fd:// takes its socket from systemd-style activation; a missing one exits', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'engine-fd-'));
    const sock = join(dir, 'engine.sock'); // the harness's socket path, so waitReady() polls it
    // What systemd does: bind+listen, put the socket at fd 3, set LISTEN_FDS/LISTEN_PID, exec the daemon.
    const script = [
      'import os, socket, sys',
      `s = socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(sock)}); s.listen(16)`,
      'os.dup2(s.fileno(), 3); os.set_inheritable(3, True)',
      "os.environ['LISTEN_FDS'] = '1'; os.environ['LISTEN_PID'] = str(os.getpid())",
      'os.execv(sys.argv[1], sys.argv[1:])',
    ].join('\n');
    const d = new TestDaemon(dir, { noDefaultHost: true, args: ['-H', 'fd://'] });
    const { spawn } = await import('node:child_process');
    d.child = spawn('python3', ['-c', script, ENGINED, ...d.baseArgs()], { stdio: ['ignore', 'pipe', 'pipe'] });
    d.child.stdout!.on('data', (x) => (d.output += x));
    d.child.stderr!.on('data', (x) => (d.output += x));
    d.exited = new Promise((res) =>
      d.child.on('exit', (code) => {
        d.exitCode = code;
        res(code);
      }),
    );
    try {
      await d.waitReady();
      const r = await d.request('GET', '/_ping');
      assert.equal(r.text(), 'OK');
      const missing = await run(
        ENGINED,
        ['-H', 'fd://', '--data-root', join(dir, 'd2'), '--exec-root', join(dir, 'e2'), '--pidfile', join(dir, 'p2.pid')],
        { timeoutMs: 30_000 },
      );
      assert.notEqual(missing.code, 0);
      assert.match(missing.stderr, /socket activation|fd/);
      await killStrayContainerd(join(dir, 'e2'));
    } finally {
      await d.cleanup();
    }
  });
});
