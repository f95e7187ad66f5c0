// Issue 13: `DOCKER_BUILDKIT=0 docker build` against the classic builder — the stream the CLI
// prints, RUN in real containers, config steps, image records (history, Parent, config), tags,
// failing steps (exit code, message, nothing left behind), -f, --build-arg, --target, stdin.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFileSync } from 'node:child_process';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const ENV = { DOCKER_BUILDKIT: '0' };

export async function makeContext(files: Record<string, string>): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'build-ctx-'));
  for (const [name, text] of Object.entries(files)) {
    await mkdir(join(dir, name, '..'), { recursive: true });
    await writeFile(join(dir, name), text);
  }
  return dir;
}

describe('docker build (classic builder)', () => {
  let d: TestDaemon;
  const dirs: string[] = [];
  const ctx = async (files: Record<string, string>) => {
    const dir = await makeContext(files);
    dirs.push(dir);
    return dir;
  };
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('a simple Dockerfile builds: the classic stream, config and history, tags, no containers left', async () => {
    const dir = await ctx({
      Dockerfile:
        'FROM busybox\nENV GREETING=hello\nWORKDIR /app\nRUN echo "$GREETING world" > out.txt && echo built\nLABEL a=b\nEXPOSE 8080\nCMD ["cat", "out.txt"]\n',
    });
    const r = await d.docker(['build', '-t', 'simple:1', '-t', 'simple:2', dir], { env: ENV, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^Step 1\/7 : FROM busybox\n ---> [0-9a-f]{12}\n/m);
    assert.match(
      r.stdout,
      /Step 4\/7 : RUN echo "\$GREETING world" > out.txt && echo built\n ---> Running in ([0-9a-f]{12})\nbuilt\nRemoving intermediate container \1\n ---> [0-9a-f]{12}\n/,
    );
    const built = /Successfully built ([0-9a-f]{12})\n/.exec(r.stdout);
    assert.ok(built, r.stdout);
    assert.match(r.stdout, /Successfully tagged simple:1\nSuccessfully tagged simple:2\n/);
    const run = await d.docker(['run', '--rm', 'simple:1']);
    assert.equal(run.stdout, 'hello world\n', run.stderr);
    const img = JSON.parse((await d.docker(['image', 'inspect', 'simple:2'])).stdout)[0];
    assert.equal(img.Id.slice(7, 19), built[1]);
    assert.equal(img.Config.WorkingDir, '/app');
    assert.deepEqual(img.Config.Cmd, ['cat', 'out.txt']);
    assert.equal(img.Config.Labels.a, 'b');
    assert.ok(img.Config.Env.includes('GREETING=hello'));
    assert.deepEqual(Object.keys(img.Config.ExposedPorts), ['8080/tcp']);
    assert.match(img.Parent, /^sha256:[0-9a-f]{64}$/);
    const hist = await d.docker(['history', '--no-trunc', '--format', '{{.CreatedBy}}|{{.Size}}', 'simple:1']);
    const lines = hist.stdout.trim().split('\n');
    assert.equal(lines[0], '/bin/sh -c #(nop)  CMD ["cat" "out.txt"]|0B');
    assert.equal(lines[1], '/bin/sh -c #(nop)  EXPOSE 8080/tcp|0B');
    assert.equal(lines[2], '/bin/sh -c #(nop)  LABEL a=b|0B');
    assert.match(lines[3]!, /^\/bin\/sh -c echo "\$GREETING world" > out.txt && echo built\|[\d.]+k?B$/);
    assert.notEqual(lines[3], '|0B');
    assert.match(lines[4]!, /^\/bin\/sh -c #\(nop\)  WORKDIR \/app\|/);
    assert.equal(lines[5], '/bin/sh -c #(nop)  ENV GREETING=hello|0B');
    const ps = await d.docker(['ps', '-aq']);
    assert.equal(ps.stdout.trim(), '', 'intermediate containers left behind');
    const images = await d.docker(['images', '--format', '{{.Repository}}:{{.Tag}}']);
    assert.deepEqual(
      images.stdout.trim().split('\n').sort(),
      ['busybox:latest', 'simple:1', 'simple:2'],
      'intermediate images must be hidden from docker images',
    );
  });
});

describe('docker build: failures, flags, stages, cache', () => {
  let d: TestDaemon;
  const dirs: string[] = [];
  const ctx = async (files: Record<string, string>) => {
    const dir = await makeContext(files);
    dirs.push(dir);
    return dir;
  };
  const build = (args: string[], input?: string) =>
    d.docker(['build', ...args], { env: ENV, timeoutMs: 120_000, ...(input !== undefined ? { input } : {}) });
  before(async () => {
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  test('the Dockerfile and .dockerignore leave the context once read when .dockerignore names them (as dockerd)', async () => {
    const dir = await ctx({
      Dockerfile: 'FROM busybox\nCOPY . /src\nCMD ["ls", "-a", "/src"]\n',
      '.dockerignore': '.dockerignore\nDockerfile\n',
      'file.txt': 'x',
    });
    const r = await d.docker(['build', '-q', '-t', 'ignored-build-files', dir], { env: ENV, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr);
    assert.deepEqual((await d.docker(['run', '--rm', 'ignored-build-files'])).stdout.split('\n').filter(Boolean).sort(), [
      '.',
      '..',
      'file.txt',
    ]);
  });

  test('a failing RUN stops the build with its exit code and message, and leaves no container; stderr comes in red', async () => {
    const dir = await ctx({ Dockerfile: 'FROM busybox\nRUN echo before && echo oops >&2\nRUN exit 7\nRUN echo never\n' });
    const r = await build(['-t', 'fails', dir]);
    assert.equal(r.code, 7, r.stdout + r.stderr);
    // dockerd's builder writes each piece of a RUN's stderr between these escapes (docker-py's tests check them).
    assert.ok(r.stdout.includes('\x1b[91moops\n\x1b[0m'), JSON.stringify(r.stdout));
    assert.match(r.stderr, /The command '\/bin\/sh -c exit 7' returned a non-zero code: 7/);
    assert.doesNotMatch(r.stdout, /never|Successfully/);
    assert.equal((await d.docker(['ps', '-aq'])).stdout.trim(), '', "the failed step's container was left behind");
    assert.notEqual((await d.docker(['image', 'inspect', 'fails'])).code, 0, 'a failed build must not tag');
    const raw = await d.request('POST', '/build?t=x', { body: Buffer.alloc(0) });
    assert.equal(raw.status, 400, raw.text());
    assert.match(raw.json().message, /build context is empty/);
  });

  test('-f, --build-arg, an unknown instruction and a missing Dockerfile', async () => {
    const dir = await ctx({
      'sub/Other.dockerfile': 'FROM busybox\nARG WHO=nobody\nRUN echo "hello $WHO" > /who\nCMD cat /who\n',
      Dockerfile: 'FROM busybox\nFROBNICATE now\n',
    });
    const r = await build(['-f', join(dir, 'sub/Other.dockerfile'), '--build-arg', 'WHO=world', '-t', 'args', dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await d.docker(['run', '--rm', 'args'])).stdout, 'hello world\n');
    const hist = await d.docker(['history', '--no-trunc', '--format', '{{.CreatedBy}}', 'args']);
    assert.match(hist.stdout, /^\|1 WHO=world \/bin\/sh -c echo "hello \$WHO" > \/who$/m);
    const bad = await build([dir]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr + bad.stdout, /unknown instruction: FROBNICATE/i);
    // The CLI checks -f itself; the daemon's own answer, for API clients:
    const tar = execFileSync('tar', ['-c', '-C', dir, '.']);
    const missing = await d.request('POST', '/build?dockerfile=nope/Dockerfile', {
      body: tar,
      headers: { 'Content-Type': 'application/x-tar' },
    });
    assert.equal(missing.status, 400, missing.text()); // dockerd's words (its untyped error is a 500)
    assert.equal(missing.json().message, 'Cannot locate specified Dockerfile: nope/Dockerfile');
  });

  test('a Dockerfile from stdin (docker build - < Dockerfile)', async () => {
    const r = await build(['-t', 'stdin', '-'], 'FROM busybox\nRUN echo from-stdin > /f\n');
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.equal((await d.docker(['run', '--rm', 'stdin', 'cat', '/f'])).stdout, 'from-stdin\n');
  });

  test('multi-stage: --target builds every stage up to it (the classic builder), none after', async () => {
    const dir = await ctx({
      Dockerfile:
        'FROM busybox AS base\nRUN echo base > /base\n\nFROM busybox AS unused\nRUN echo unused-ran\n\nFROM base AS final\nRUN cat /base > /copy\n\nFROM final AS other\nRUN echo other\n',
    });
    const r = await build(['--target', 'final', '-t', 'ms', dir]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /Step 4\/6 : RUN echo unused-ran\n ---> Running in [0-9a-f]{12}\nunused-ran\n/);
    assert.doesNotMatch(r.stdout, /echo other/);
    assert.match(r.stdout, /Step 1\/6 : FROM busybox AS base/);
    assert.equal((await d.docker(['run', '--rm', 'ms', 'cat', '/copy'])).stdout, 'base\n');
    const bad = await build(['--target', 'nosuch', dir]);
    assert.notEqual(bad.code, 0);
    assert.match(bad.stderr, /target stage "nosuch" could not be found/);
  });

  test('an unchanged rebuild runs no container and gives the same image; nocache runs again; the cache survives a restart', async () => {
    const dir = await ctx({ Dockerfile: 'FROM busybox\nENV A=1\nRUN echo ran-step\nCMD ["true"]\n' });
    const first = await build(['-t', 'cached', dir]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const id1 = /Successfully built (\w+)/.exec(first.stdout)![1];

    const second = await build(['-t', 'cached', dir]);
    assert.equal(second.code, 0, second.stderr);
    assert.doesNotMatch(second.stdout, /Running in|^ran-step$/m);
    assert.equal((second.stdout.match(/ ---> Using cache/g) ?? []).length, 3);
    assert.equal(/Successfully built (\w+)/.exec(second.stdout)![1], id1);
    await d.stop();
    await d.restart();
    const third = await build(['-t', 'cached', dir]);
    assert.equal((third.stdout.match(/ ---> Using cache/g) ?? []).length, 3, third.stdout);
    const nocache = await build(['--no-cache', '-t', 'cached', dir]);
    assert.match(nocache.stdout, /^ran-step$/m);
    assert.doesNotMatch(nocache.stdout, /Using cache/);
  });

  test('a context of 10 000 files in nested directories: all copied, .dockerignore applied, cached on rebuild', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'build-ctx-'));
    dirs.push(dir);
    // 100 directories × 100 files, each naming itself; one directory is ignored.
    for (let i = 0; i < 100; i++) {
      const sub = join(dir, 'tree', `d${i}`);
      await mkdir(sub, { recursive: true });
      await Promise.all(Array.from({ length: 100 }, (_v, j) => writeFile(join(sub, `f${j}`), `${i}/${j}\n`)));
    }
    await writeFile(join(dir, '.dockerignore'), 'tree/d99\n');
    await writeFile(
      join(dir, 'Dockerfile'),
      'FROM busybox\nCOPY tree /tree\nRUN find /tree -type f | wc -l > /count && cat /tree/d42/f7\n',
    );
    const first = await build(['-t', 'many', dir]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    assert.match(first.stdout, /^42\/7$/m);
    const count = await d.docker(['run', '--rm', 'many', 'cat', '/count']);
    assert.equal(count.stdout.trim(), '9900', count.stderr);
    const again = await build(['-t', 'many', dir]);
    assert.equal((again.stdout.match(/ ---> Using cache/g) ?? []).length, 2, again.stdout);
  });
});
