// POST /build and /build/cancel on the shared route harness: query decoding into BuildOptions,
// refusals as 400 {"message"}, the JSON stream (errorDetail with the exit code after streaming
// started, quiet mode holding output back) and the body reaching the backend as a stream.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { registerBuildRoutes, type BuildBackend } from './build.ts';
import type { BuildOptions, BuildSink } from '../../types/build.ts';
import { invalidParameter } from '../../errors.ts';

const lines = (text: string) =>
  text
    .trim()
    .split(/\r?\n/)
    .map((l) => JSON.parse(l));

describe('build routes', () => {
  let received = '';
  const script: Parameters<typeof fakeBackend<BuildBackend>>[0] = {
    build: async (opts: BuildOptions, body: AsyncIterable<Uint8Array> | null, sink: BuildSink) => {
      received = '';
      if (body) for await (const c of body) received += Buffer.from(c).toString('utf8');
      if (opts.target === 'fail-early') throw invalidParameter('Cannot locate specified Dockerfile: nope');
      sink({ stream: 'Step 1/2 : FROM busybox\n' });
      if (opts.target === 'two-stages') sink({ aux: { ID: 'sha256:' + 'cd'.repeat(32) } });
      if (opts.target === 'fail') {
        throw Object.assign(new Error("The command '/bin/sh -c exit 7' returned a non-zero code: 7"), { exitCode: 7 });
      }
      sink({ aux: { ID: 'sha256:' + 'ab'.repeat(32) } });
      sink({ stream: `Successfully built ${'ab'.repeat(6)}\n` });
    },
    cancel: true,
  };
  const { backend, calls } = fakeBackend<BuildBackend>(script);
  const h = new RouteHarness((r) => registerBuildRoutes(r, backend, { experimental: () => false }));
  after(() => h.close());

  test('query options reach the backend decoded; the body is streamed to it', async () => {
    calls.length = 0;
    const q = new URLSearchParams();
    q.append('t', 'a:1');
    q.append('t', 'b');
    q.set('dockerfile', 'sub/Dockerfile');
    q.set('buildargs', JSON.stringify({ A: '1', B: null }));
    q.set('labels', JSON.stringify({ l: 'v' }));
    q.set('cachefrom', JSON.stringify(['img:cache']));
    q.set('ulimits', JSON.stringify([{ Name: 'nofile', Soft: 100, Hard: 200 }]));
    q.set('extrahosts', 'h1:1.2.3.4,gw:host-gateway');
    q.set('networkmode', 'host');
    q.set('memory', '67108864');
    q.set('shmsize', '1048576');
    q.set('nocache', '1');
    q.set('forcerm', '1');
    q.set('target', 'final');
    q.set('buildid', 'abc');
    const r = await h.request('POST', `/build?${q}`, {
      raw: 'tar-bytes',
      headers: {
        'Content-Type': 'application/x-tar',
        'X-Registry-Config': Buffer.from(JSON.stringify({ 'reg.example:5000': { username: 'u', password: 'p' } })).toString('base64'),
      },
    });
    assert.equal(r.status, 200, r.text);
    assert.equal(received, 'tar-bytes');
    const o = calls[0]!.args[0] as BuildOptions;
    assert.deepEqual(o.tags, ['a:1', 'b']);
    assert.equal(o.dockerfile, 'sub/Dockerfile');
    assert.deepEqual(o.buildArgs, { A: '1', B: null });
    assert.deepEqual(o.labels, { l: 'v' });
    assert.deepEqual(o.cacheFrom, ['img:cache']);
    assert.deepEqual(o.ulimits, [{ Name: 'nofile', Soft: 100, Hard: 200 }]);
    assert.deepEqual(o.extraHosts, ['h1:1.2.3.4', 'gw:host-gateway']);
    assert.equal(o.networkMode, 'host');
    assert.equal(o.memory, 67108864);
    assert.equal(o.shmSize, 1048576);
    assert.equal(o.noCache, true);
    assert.equal(o.remove, true, 'rm defaults to true');
    assert.equal(o.forceRemove, true);
    assert.equal(o.target, 'final');
    assert.equal(o.buildId, 'abc');
    assert.deepEqual(o.registryAuth, { 'reg.example:5000': { username: 'u', password: 'p' } });
    const msgs = lines(r.text);
    assert.deepEqual(msgs[0], { stream: 'Step 1/2 : FROM busybox\n' });
    assert.deepEqual(msgs[1], { aux: { ID: 'sha256:' + 'ab'.repeat(32) } });
  });

  test('bad options are 400s with a message and never reach the backend', async () => {
    calls.length = 0;
    for (const [query, pattern] of [
      ['buildargs=%7Bnot-json', /^error reading build args: invalid character 'n' looking for beginning of object key string$/],
      ['cachefrom=%5B%22a%22', /^error reading cache-from: unexpected end of JSON input$/],
      ['labels=%5B1%5D', /invalid labels value/],
      ['outputs=type%3Dlocal', /outputs are not supported/],
      ['squash=1', /experimental/],
      ['version=2', /BuildKit/],
      ['extrahosts=nocolon', /invalid IP address in add-host/],
    ] as const) {
      const r = await h.request('POST', `/build?${query}`, { raw: 'x' });
      assert.equal(r.status, 400, `${query}: ${r.text}`);
      assert.match(r.json.message, pattern);
    }
    assert.equal(calls.length, 0);
  });

  test('an error before the first message is an HTTP error; after it, an errorDetail line with the exit code', async () => {
    const early = await h.request('POST', '/build?target=fail-early', { raw: 'x' });
    assert.equal(early.status, 400);
    assert.equal(early.json.message, 'Cannot locate specified Dockerfile: nope');
    const late = await h.request('POST', '/build?target=fail', { raw: 'x' });
    assert.equal(late.status, 200);
    const msgs = lines(late.text);
    assert.deepEqual(msgs.at(-1), {
      errorDetail: { code: 7, message: "The command '/bin/sh -c exit 7' returned a non-zero code: 7" },
      error: "The command '/bin/sh -c exit 7' returned a non-zero code: 7",
    });
  });

  test('q=1 sends only the final image ID (as dockerd: no aux); a failure then shows the held output and the error', async () => {
    const ok = await h.request('POST', '/build?q=1', { raw: 'x' });
    assert.deepEqual(lines(ok.text), [{ stream: `sha256:${'ab'.repeat(32)}\n` }]);
    const two = await h.request('POST', '/build?q=1&target=two-stages', { raw: 'x' });
    assert.deepEqual(lines(two.text), [{ stream: `sha256:${'ab'.repeat(32)}\n` }]);
    const bad = await h.request('POST', '/build?q=1&target=fail', { raw: 'x' });
    const msgs = lines(bad.text);
    assert.deepEqual(msgs[0], { stream: 'Step 1/2 : FROM busybox\n' });
    assert.equal(msgs[1].errorDetail.code, 7);
  });

  test('/build/cancel needs an id and passes it on', async () => {
    calls.length = 0;
    const none = await h.request('POST', '/build/cancel');
    assert.equal(none.status, 400);
    assert.match(none.json.message, /build ID not provided/);
    const r = await h.request('POST', '/build/cancel?id=abc');
    assert.equal(r.status, 200);
    assert.deepEqual(
      calls.map((c) => [c.method, c.args[0]]),
      [['cancel', 'abc']],
    );
  });

  test('API versions: aux from 1.30, platform from 1.32, outputs refused from 1.40 (ignored before)', async () => {
    const id = 'sha256:' + 'ab'.repeat(32);
    const old = lines((await h.request('POST', '/v1.29/build', { raw: 'x' })).text);
    assert.equal(
      old.some((m) => m.aux),
      false,
    );
    assert.ok(lines((await h.request('POST', '/v1.30/build', { raw: 'x' })).text).some((m) => m.aux));
    assert.deepEqual(lines((await h.request('POST', '/v1.29/build?q=1', { raw: 'x' })).text), [{ stream: `${id}\n` }]);
    await h.request('POST', '/v1.31/build?platform=linux/amd64', { raw: 'x' });
    assert.equal((calls.at(-1)!.args[0] as BuildOptions).platform, undefined);
    await h.request('POST', '/v1.32/build?platform=linux/amd64', { raw: 'x' });
    assert.equal((calls.at(-1)!.args[0] as BuildOptions).platform, 'linux/amd64');
    const outputs = encodeURIComponent('[{"Type":"local"}]');
    assert.equal((await h.request('POST', `/v1.39/build?outputs=${outputs}`, { raw: 'x' })).status, 200);
    assert.equal((await h.request('POST', `/v1.40/build?outputs=${outputs}`, { raw: 'x' })).status, 400);
  });
});
