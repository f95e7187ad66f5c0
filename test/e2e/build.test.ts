// Issue 13: `DOCKER_BUILDKIT=0 docker build` against the classic builder — the stream the CLI
// prints, RUN in real containers, config steps, image records (history, Parent, config), tags,
// failing steps (exit code, message, nothing left behind), -f, --build-arg, --target, stdin.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      Dockerfile: 'FROM busybox\nENV GREETING=hello\nWORKDIR /app\nRUN echo "$GREETING world" > out.txt && echo built\nLABEL a=b\nEXPOSE 8080\nCMD ["cat", "out.txt"]\n',
    });
    const r = await d.docker(['build', '-t', 'simple:1', '-t', 'simple:2', dir], { env: ENV, timeoutMs: 120_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    assert.match(r.stdout, /^Step 1\/7 : FROM busybox\n ---> [0-9a-f]{12}\n/m);
    assert.match(r.stdout, /Step 4\/7 : RUN echo "\$GREETING world" > out.txt && echo built\n ---> Running in ([0-9a-f]{12})\nbuilt\nRemoving intermediate container \1\n ---> [0-9a-f]{12}\n/);
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
    assert.match(lines[4]!, /^\/bin\/sh -c #\(nop\) WORKDIR \/app\|/);
    assert.equal(lines[5], '/bin/sh -c #(nop)  ENV GREETING=hello|0B');
    const ps = await d.docker(['ps', '-aq']);
    assert.equal(ps.stdout.trim(), '', 'intermediate containers left behind');
    const images = await d.docker(['images', '--format', '{{.Repository}}:{{.Tag}}']);
    assert.deepEqual(images.stdout.trim().split('\n').sort(), ['busybox:latest', 'simple:1', 'simple:2'], 'intermediate images must be hidden from docker images');
  });
});
