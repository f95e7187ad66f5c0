// Issue 13: more of the classic builder end to end — ONBUILD triggers of the base image, remote=
// (a tarball and a plain Dockerfile over http), POST /build/cancel, a context tar with a traversal
// entry, and host networking for RUN.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';
import { startRegistry } from '../helpers/registry.ts';

const ENV = { DOCKER_BUILDKIT: '0' };

describe('docker build: ONBUILD, remote, cancel, bad contexts', () => {
  let d: TestDaemon;
  let dir: string;
  let server: Server;
  let base = '';
  const build = (args: string[]) => d.docker(['build', ...args], { env: ENV, timeoutMs: 120_000 });
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'build-more-'));
    d = await startDaemon();
    await loadBusybox(d);
    await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\nRUN echo from-remote-tar > /r\n');
    const tar = execFileSync('tar', ['-cz', '-C', dir, 'Dockerfile']);
    server = createServer((req, res) => {
      if (req.url === '/ctx.tar.gz') res.end(tar);
      else if (req.url === '/Dockerfile') res.end('FROM busybox\nRUN echo from-remote-dockerfile > /r\n');
      else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    server?.close();
    await d?.cleanup();
    await rm(dir, { recursive: true, force: true });
  });

  test('ONBUILD triggers of the base image run in the child build, once', async () => {
    const parent = join(dir, 'parent');
    const child = join(dir, 'child');
    execFileSync('mkdir', ['-p', parent, child]);
    await writeFile(join(parent, 'Dockerfile'), 'FROM busybox\nONBUILD RUN echo triggered > /t\n');
    await writeFile(join(child, 'Dockerfile'), 'FROM onbuild-parent\nRUN cat /t\n');
    assert.equal((await build(['-t', 'onbuild-parent', parent])).code, 0);
    const inspect = JSON.parse((await d.docker(['image', 'inspect', 'onbuild-parent'])).stdout)[0];
    assert.deepEqual(inspect.Config.OnBuild, ['RUN echo triggered > /t']);
    const r = await build(['-t', 'onbuild-child', child]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /# Executing 1 build trigger\n/);
    assert.match(r.stdout, /Step 2\/2 : RUN cat \/t\n ---> Running in \w+\ntriggered\n/);
    const c = JSON.parse((await d.docker(['image', 'inspect', 'onbuild-child'])).stdout)[0];
    assert.ok(!c.Config.OnBuild?.length, 'triggers are not inherited by the child');
  });

  test('remote= a tarball or a plain Dockerfile over http', async () => {
    const t = await build(['-t', 'remote-tar', `${base}/ctx.tar.gz`]);
    assert.equal(t.code, 0, t.stdout + t.stderr);
    assert.equal((await d.docker(['run', '--rm', 'remote-tar', 'cat', '/r'])).stdout, 'from-remote-tar\n');
    const f = await d.request('POST', `/build?t=remote-df&remote=${encodeURIComponent(`${base}/Dockerfile`)}`);
    assert.equal(f.status, 200);
    assert.match(f.text(), /Successfully tagged remote-df:latest/);
    assert.equal((await d.docker(['run', '--rm', 'remote-df', 'cat', '/r'])).stdout, 'from-remote-dockerfile\n');
    const missing = await d.request('POST', `/build?remote=${encodeURIComponent(`${base}/nothing`)}`);
    assert.equal(missing.status, 400);
    assert.match(missing.json().message, /404/);
  });

  test('ADD of a URL downloads the file into the image, with Downloading progress', async () => {
    const ctxDir = join(dir, 'addurl');
    execFileSync('mkdir', ['-p', ctxDir]);
    await writeFile(join(ctxDir, 'Dockerfile'), `FROM busybox\nADD ${base}/Dockerfile /downloaded/\n`);
    const tar = execFileSync('tar', ['-c', '-C', ctxDir, '.']);
    const r = await d.request('POST', '/build?t=addurl', { body: tar, headers: { 'Content-Type': 'application/x-tar' } });
    assert.equal(r.status, 200);
    assert.match(r.text(), /"status":"Downloading","progressDetail":\{"current":\d+/);
    assert.match(r.text(), /Successfully tagged addurl:latest/);
    assert.equal(
      (await d.docker(['run', '--rm', 'addurl', 'cat', '/downloaded/Dockerfile'])).stdout,
      'FROM busybox\nRUN echo from-remote-dockerfile > /r\n',
    );
  });

  test('POST /build/cancel stops a running build and removes its container', async () => {
    await writeFile(join(dir, 'Dockerfile.slow'), 'FROM busybox\nRUN echo slow-started && sleep 60\n');
    const tar = execFileSync('tar', ['-c', '-C', dir, 'Dockerfile.slow']);
    let text = '';
    const done = new Promise<void>((resolve, reject) => {
      const req = request(
        {
          socketPath: d.socket,
          method: 'POST',
          path: '/build?dockerfile=Dockerfile.slow&buildid=cancel-me&t=cancelled',
          headers: { 'Content-Type': 'application/x-tar' },
        },
        (res) => {
          res.on('data', (c: Buffer) => (text += c.toString()));
          res.on('end', resolve);
        },
      );
      req.on('error', reject);
      req.end(tar);
    });
    await until('the RUN step started', () => (text.includes('"slow-started\\n"') ? true : undefined), 60_000);
    const c = await d.request('POST', '/build/cancel?id=cancel-me');
    assert.equal(c.status, 200);
    await done;
    assert.match(text, /"errorDetail":\{"message":"build cancelled/);
    await until('no container left', async () => ((await d.docker(['ps', '-aq'])).stdout.trim() === '' ? true : undefined), 30_000);
    assert.notEqual((await d.docker(['image', 'inspect', 'cancelled'])).code, 0);
  });

  test('a context tar with a traversal entry: the name is cleaned inside the context (as dockerd), nothing written outside or left', async () => {
    const evil = join(dir, 'evil');
    execFileSync('mkdir', ['-p', join(evil, 'a')]);
    await writeFile(join(evil, 'x'), 'x');
    // GNU tar keeps ../ with -P; the entry name is a/../../x, unpacked as x (no Dockerfile: dockerd's words, as a 400).
    const tar = execFileSync('tar', ['-c', '-P', '-C', join(evil, 'a'), '../x', '--transform', 's|^\\.\\./x|a/../../x|']);
    const r = await d.request('POST', '/build', { body: tar, headers: { 'Content-Type': 'application/x-tar' } });
    assert.equal(r.status, 400, r.text());
    assert.equal(r.json().message, 'Cannot locate specified Dockerfile: Dockerfile');
    const { readdir } = await import('node:fs/promises');
    assert.ok(!(await readdir(d.dataRoot)).includes('x'), 'written outside the context');
    assert.deepEqual(
      (await readdir(join(d.dataRoot, 'tmp'))).filter((n) => n.startsWith('build-')),
      [],
      'the context directory was left behind',
    );
  });

  test('docker-compose (v1) build: builds the service image with its args', async (t) => {
    if ((await run('sh', ['-c', 'command -v docker-compose'])).code !== 0) {
      t.skip('docker-compose is not installed (scripts/setup.sh installs it with the test packages)');
      return;
    }
    const proj = join(dir, 'compose');
    execFileSync('mkdir', ['-p', proj]);
    await writeFile(join(proj, 'Dockerfile'), 'FROM busybox\nARG FLAVOUR=plain\nRUN echo "$FLAVOUR" > /flavour\nCMD ["cat", "/flavour"]\n');
    await writeFile(
      join(proj, 'docker-compose.yml'),
      'version: "3"\nservices:\n  web:\n    build:\n      context: .\n      args:\n        FLAVOUR: composed\n    image: composed-web:1\n',
    );
    const r = await run('docker-compose', ['--project-directory', proj, '-f', join(proj, 'docker-compose.yml'), 'build'], {
      env: { ...process.env, DOCKER_HOST: d.host, COMPOSE_DOCKER_CLI_BUILD: '0', DOCKER_BUILDKIT: '0' },
      timeoutMs: 120_000,
    });
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await d.docker(['run', '--rm', 'composed-web:1'])).stdout, 'composed\n');
  });

  test('a base image missing locally is pulled (and pull=1 pulls again)', async () => {
    const reg = await startRegistry();
    try {
      const ref = `${reg.host}/base/busybox:1`;
      assert.equal((await d.docker(['tag', 'busybox', ref])).code, 0);
      const push = await d.docker(['push', ref], { timeoutMs: 120_000 });
      assert.equal(push.code, 0, push.stderr);
      assert.equal((await d.docker(['rmi', ref])).code, 0);
      const ctxDir = join(dir, 'pull');
      execFileSync('mkdir', ['-p', ctxDir]);
      await writeFile(join(ctxDir, 'Dockerfile'), `FROM ${ref}\nRUN echo pulled-base > /p\n`);
      const r = await build(['-t', 'from-registry', ctxDir]);
      assert.equal(r.code, 0, r.stdout + r.stderr);
      assert.match(r.stdout, /Pulling from base\/busybox/);
      assert.equal((await d.docker(['run', '--rm', 'from-registry', 'cat', '/p'])).stdout, 'pulled-base\n');
      const again = await build(['--pull', '-t', 'from-registry', ctxDir]);
      assert.equal(again.code, 0, again.stderr);
      assert.match(again.stdout, /Image is up to date|Pulling from/);
    } finally {
      await reg.cleanup();
    }
  });

  test("RUN with --network host sees the host's interfaces", async () => {
    await writeFile(join(dir, 'Dockerfile.host'), 'FROM busybox\nRUN ls /sys/class/net > /nets\n');
    const r = await build(['--network', 'host', '-f', join(dir, 'Dockerfile.host'), '-t', 'hostnet', dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const nets = (await d.docker(['run', '--rm', 'hostnet', 'cat', '/nets'])).stdout.trim().split('\n');
    assert.ok(nets.length > 1 && nets.includes('lo'), `expected the host's interfaces, got ${nets.join(',')}`);
  });
});
