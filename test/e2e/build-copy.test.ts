// Issue 13: COPY and ADD through `DOCKER_BUILDKIT=0 docker build` — context files, wildcards,
// --chown, COPY --from a stage, ADD of a local tar — and the layer cache's content rule: touching a
// file keeps the cache, changing its content invalidates from that step on; prune and df.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile, mkdir, utimes } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';

const ENV = { DOCKER_BUILDKIT: '0' };

describe('docker build: COPY, ADD and the content cache', () => {
  let d: TestDaemon;
  let root: string;
  const build = (args: string[]) => d.docker(['build', ...args], { env: ENV, timeoutMs: 120_000 });
  const write = async (rel: string, text: string) => {
    await mkdir(join(root, rel, '..'), { recursive: true });
    await writeFile(join(root, rel), text);
  };
  before(async () => {
    root = await mkdtemp(join(tmpdir(), 'build-copy-'));
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(root, { recursive: true, force: true });
  });

  test('COPY files, wildcards and directories, --chown, COPY --from a stage, ADD extracts a local tar', async () => {
    await write('app/a.txt', 'A\n');
    await write('app/sub/b.txt', 'B\n');
    await write('one.conf', 'one\n');
    await write('two.conf', 'two\n');
    await write('.dockerignore', 'ignored.txt\n');
    await write('ignored.txt', 'secret\n');
    await mkdir(join(root, 'tarsrc/inner'), { recursive: true });
    await writeFile(join(root, 'tarsrc/inner/t.txt'), 'from-tar\n');
    execFileSync('tar', ['-czf', join(root, 'bundle.tar.gz'), '-C', join(root, 'tarsrc'), 'inner']);
    await write(
      'Dockerfile',
      [
        'FROM busybox AS build',
        'RUN echo stage-one > /made',
        'FROM busybox',
        'WORKDIR /w',
        'COPY app/ ./app/',
        'COPY *.conf /etc/confs/',
        'COPY --chown=1234:5678 one.conf owned.conf',
        'COPY --from=build /made /made',
        'ADD bundle.tar.gz /x/',
        'COPY . /ctx/',
        '',
      ].join('\n'),
    );
    const r = await build(['-t', 'copy-test', root]);
    assert.equal(r.code, 0, r.stdout + r.stderr);
    const out = await d.docker([
      'run',
      '--rm',
      'copy-test',
      'sh',
      '-c',
      'cat /w/app/a.txt /w/app/sub/b.txt /etc/confs/one.conf /etc/confs/two.conf /made /x/inner/t.txt; stat -c "%u:%g" /w/owned.conf; ls /ctx | tr "\\n" " "',
    ]);
    assert.equal(out.code, 0, out.stderr);
    const lines = out.stdout.split('\n');
    assert.deepEqual(lines.slice(0, 7), ['A', 'B', 'one', 'two', 'stage-one', 'from-tar', '1234:5678']);
    assert.ok(!lines[7]!.includes('ignored.txt'), `.dockerignore'd file copied: ${lines[7]}`);
    assert.ok(lines[7]!.includes('one.conf'));
    const hist = await d.docker(['history', '--no-trunc', '--format', '{{.CreatedBy}}', 'copy-test']);
    assert.match(hist.stdout, /^\/bin\/sh -c #\(nop\) COPY dir:[0-9a-f]{64} in \.\/app\/ $/m);
    assert.match(hist.stdout, /^\/bin\/sh -c #\(nop\) COPY multi:[0-9a-f]{64} in \/etc\/confs\/ $/m);
  });

  test('cache: touching a file keeps the cache; changing its content invalidates from that step on', async () => {
    const dir = join(root, 'cachectx');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'data.txt'), 'v1\n');
    await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\nRUN echo before-copy\nCOPY data.txt /data.txt\nRUN cat /data.txt\n');
    const first = await build(['-t', 'cache-copy', dir]);
    assert.equal(first.code, 0, first.stdout + first.stderr);
    const later = new Date(Date.now() + 3600_000);
    await utimes(join(dir, 'data.txt'), later, later);
    const touched = await build(['-t', 'cache-copy', dir]);
    assert.equal(touched.code, 0, touched.stderr);
    assert.equal((touched.stdout.match(/ ---> Using cache/g) ?? []).length, 3, touched.stdout);
    assert.doesNotMatch(touched.stdout, /Running in/);
    await writeFile(join(dir, 'data.txt'), 'v2\n');
    const changed = await build(['-t', 'cache-copy', dir]);
    assert.equal(changed.code, 0, changed.stderr);
    assert.equal((changed.stdout.match(/ ---> Using cache/g) ?? []).length, 1, changed.stdout);
    assert.match(changed.stdout, /Step 4\/4 : RUN cat \/data.txt\n ---> Running in \w+\nv2\n/);
  });

  test('COPY of a source outside the context or matching nothing fails clearly and leaves nothing', async () => {
    const dir = join(root, 'badctx');
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\nCOPY nothing-*.txt /x/\n');
    const before = (await d.docker(['images', '-aq'])).stdout.trim().split('\n').length;
    const r = await build([dir]);
    assert.notEqual(r.code, 0);
    assert.match(r.stderr, /COPY failed/);
    await writeFile(join(dir, 'Dockerfile'), 'FROM busybox\nCOPY ../../etc/passwd /x\n');
    const r2 = await build([dir]);
    assert.notEqual(r2.code, 0);
    assert.match(r2.stderr, /COPY failed/);
    assert.equal((await d.docker(['images', '-aq'])).stdout.trim().split('\n').length, before, 'a failed COPY left an image');
  });

  test('build cache shows in system df and build prune reclaims it', async () => {
    const df = await d.request('GET', '/system/df?type=build-cache');
    assert.equal(df.status, 200);
    const entries = df.json().BuildCache as Array<{ ID: string; Type: string; Description: string; Size: number }>;
    assert.ok(entries.length >= 5, `expected cache entries, got ${entries.length}`);
    assert.ok(entries.some((e) => e.Type === 'source.local' && /COPY/.test(e.Description)));
    assert.ok(entries.some((e) => e.Type === 'regular' && e.Size > 0));
    const pruned = await d.docker(['builder', 'prune', '-af']);
    assert.equal(pruned.code, 0, pruned.stderr);
    assert.match(pruned.stdout, /Total reclaimed space/);
    const after = (await d.request('GET', '/system/df?type=build-cache')).json().BuildCache;
    assert.equal(after.length, 0);
    const rebuilt = await build(['-t', 'cache-copy', join(root, 'cachectx')]);
    assert.doesNotMatch(rebuilt.stdout, /Using cache/);
    assert.equal((await d.docker(['run', '--rm', 'cache-copy', 'cat', '/data.txt'])).stdout, 'v2\n');
  });
});
