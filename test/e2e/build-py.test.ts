// Issue 13: docker-py's images.build against the classic builder — buildargs, target, extra_hosts,
// network_mode, labels, cache_from and a failing step (BuildError) — plus the client hanging up
// mid-build, which cancels it and removes its container.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { run, startDaemon, type TestDaemon } from '../helpers/daemon.ts';
import { loadBusybox } from '../helpers/images.ts';
import { until } from '../helpers/until.ts';

const SCRIPT = String.raw`
import docker, json, os, sys
c = docker.DockerClient(base_url=os.environ['DOCKER_HOST'], version='1.51')
ctx = sys.argv[1]
out = {}
def streams(logs):
    return ''.join(l.get('stream', '') for l in logs)
img, logs = c.images.build(path=ctx, tag='py:1', buildargs={'WHO': 'py'}, target='final',
                           extra_hosts={'myhost': '10.1.2.3'}, labels={'made.by': 'docker-py'}, rm=True)
out['labels'] = img.labels
out['run'] = c.containers.run('py:1', remove=True).decode()
out['first'] = streams(logs)
img2, logs2 = c.images.build(path=ctx, dockerfile='Dockerfile.net', network_mode='none', rm=True)
out['nets'] = c.containers.run(img2.id, ['cat', '/nets'], remove=True).decode()
c.api.prune_builds()
c.api.post(c.api._url('/build/prune'), params={'all': '1'})
img3, logs3 = c.images.build(path=ctx, tag='py:2', buildargs={'WHO': 'py'}, target='final',
                             extra_hosts={'myhost': '10.1.2.3'}, labels={'made.by': 'docker-py'}, cache_from=['py:1'], rm=True)
out['cached'] = streams(logs3)
try:
    c.images.build(path=ctx, dockerfile='Dockerfile.fail', rm=True)
    out['error'] = None
except docker.errors.BuildError as e:
    out['error'] = e.msg
print(json.dumps(out))
`;

describe('docker-py images.build', () => {
  let d: TestDaemon;
  let ctx: string;
  before(async () => {
    ctx = await mkdtemp(join(tmpdir(), 'build-py-'));
    await writeFile(
      join(ctx, 'Dockerfile'),
      [
        'FROM busybox AS base',
        'ARG WHO=nobody',
        'RUN echo "hi $WHO" > /who && grep myhost /etc/hosts > /hosts',
        'FROM base AS final',
        'CMD cat /who /hosts',
        'FROM final AS never',
        'RUN echo never-built && exit 1',
        '',
      ].join('\n'),
    );
    await writeFile(join(ctx, 'Dockerfile.net'), 'FROM busybox\nRUN ls /sys/class/net | tr "\\n" " " > /nets\n');
    await writeFile(join(ctx, 'Dockerfile.fail'), 'FROM busybox\nRUN echo failing && exit 3\n');
    await writeFile(join(ctx, 'Dockerfile.slow'), 'FROM busybox\nRUN echo started-slow && sleep 60\n');
    d = await startDaemon();
    await loadBusybox(d);
  });
  after(async () => {
    await d?.cleanup();
    await rm(ctx, { recursive: true, force: true });
  });

  test('buildargs, target, extra_hosts, network_mode, labels, cache_from and a failing step', async () => {
    const r = await run('python3', ['-c', SCRIPT, ctx], { env: { ...process.env, DOCKER_HOST: d.host }, timeoutMs: 240_000 });
    assert.equal(r.code, 0, r.stderr + r.stdout);
    const out = JSON.parse(r.stdout);
    assert.deepEqual(out.labels, { 'made.by': 'docker-py' });
    assert.match(out.run, /^hi py\n10\.1\.2\.3\s+myhost\n$/);
    assert.doesNotMatch(out.first, /never-built/);
    assert.equal(out.nets, 'lo ');
    assert.match(out.cached, /Step 3\/\d+ : RUN echo "hi \$WHO".*\n ---> Using cache\n/);
    assert.doesNotMatch(out.cached, /Running in/);
    assert.equal(out.error, "The command '/bin/sh -c echo failing && exit 3' returned a non-zero code: 3");
    assert.equal((await d.docker(['ps', '-aq'])).stdout.trim(), '');
  });

  test('a client hanging up mid-build cancels it and removes its container', async () => {
    const tar = execFileSync('tar', ['-c', '-C', ctx, '.']);
    const { request } = await import('node:http');
    const req = request({
      socketPath: d.socket,
      method: 'POST',
      path: '/build?dockerfile=Dockerfile.slow&t=slow',
      headers: { 'Content-Type': 'application/x-tar' },
    });
    let seen = '';
    const started = new Promise<void>((resolve, reject) => {
      req.on('response', (res) =>
        res.on('data', (c: Buffer) => {
          seen += c.toString();
          if (seen.includes('"started-slow\\n"')) resolve(); // the command's output, not the Step line
        }),
      );
      req.on('error', reject);
    });
    req.end(tar);
    await started;
    // The command's output can arrive before the start is recorded (the process runs before the
    // runtime's answer is handled): wait for the running container to show.
    await until("the RUN step's running container in docker ps", async () =>
      (await d.docker(['ps', '-q'])).stdout.trim().split('\n').filter(Boolean).length === 1 ? true : undefined,
    );
    req.destroy();
    await until(
      'the build container is removed',
      async () => ((await d.docker(['ps', '-aq'])).stdout.trim() === '' ? true : undefined),
      30_000,
    );
    assert.notEqual((await d.docker(['image', 'inspect', 'slow'])).code, 0);
  });
});
