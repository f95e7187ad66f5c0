// Registry routes on a recording fake backend: a failure before the first progress message is a
// real status, after it an errorDetail line; X-Registry-Auth decoded; pull/import/search checks.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { notFound } from '../../errors.ts';
import type { ProgressSink } from '../../types/distribution.ts';
import { registerDistributionRoutes, type DistributionBackend } from './distribution.ts';

describe('distribution routes', () => {
  const { backend, calls } = fakeBackend<DistributionBackend>({
    pull: async (p: { fromImage: string }, sink: ProgressSink) => {
      if (p.fromImage === 'missing') throw notFound('manifest unknown');
      sink({ status: 'Pulling from library/busybox', id: 'latest' });
      if (p.fromImage === 'broken') throw new Error('unexpected EOF');
      sink({ status: 'Status: Downloaded newer image for busybox:latest' });
    },
    push: async () => undefined,
    login: { Status: 'Login Succeeded', IdentityToken: '' },
    search: [],
    inspect: { Descriptor: {}, Platforms: [] },
  });
  const h = new RouteHarness((r) =>
    registerDistributionRoutes(r, backend, {
      imagePlatform: async (ref: string) => (ref.startsWith('busybox') ? { Os: 'linux', Architecture: 'amd64' } : undefined),
    }),
  );
  after(() => h.close());

  test('pull streams JSON progress; an error before the first message is a status, after it an error line', async () => {
    const ok = await h.request('POST', '/images/create?fromImage=busybox&tag=latest');
    assert.equal(ok.status, 200);
    assert.equal(ok.headers['content-type'], 'application/json');
    assert.deepEqual(
      ok.text
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l).status),
      ['Pulling from library/busybox', 'Status: Downloaded newer image for busybox:latest'],
    );
    const missing = await h.request('POST', '/images/create?fromImage=missing');
    assert.equal(missing.status, 404);
    assert.equal(missing.json.message, 'manifest unknown');
    const broken = await h.request('POST', '/images/create?fromImage=broken');
    assert.equal(broken.status, 200);
    const last = JSON.parse(broken.text.trim().split('\n').at(-1)!);
    assert.deepEqual(last, { errorDetail: { message: 'unexpected EOF' }, error: 'unexpected EOF' });
    assert.equal((await h.request('POST', '/images/create')).status, 400);
  });

  test('X-Registry-Auth is decoded for pull and push; /auth takes the body', async () => {
    const auth = Buffer.from(JSON.stringify({ username: 'u', password: 'p', serveraddress: 'reg:5000' })).toString('base64url');
    await h.request('POST', '/images/create?fromImage=busybox', { headers: { 'X-Registry-Auth': auth } });
    assert.equal((calls.at(-1)?.args[0] as { auth: { username: string } }).auth.username, 'u');
    const push = await h.request('POST', '/images/reg:5000/app/push?tag=1', { headers: { 'X-Registry-Auth': auth } });
    assert.equal(push.status, 200);
    assert.deepEqual(calls.at(-1)?.args.slice(0, 2), ['reg:5000/app', '1']);
    const login = await h.request('POST', '/auth', { body: { username: 'u', password: 'p', serveraddress: 'reg:5000' } });
    assert.deepEqual(login.json, { Status: 'Login Succeeded', IdentityToken: '' });
  });

  test('search needs a term; distribution inspect takes a full name', async () => {
    assert.equal((await h.request('GET', '/images/search')).status, 400);
    assert.deepEqual((await h.request('GET', '/images/search?term=busy&limit=5')).json, []);
    assert.deepEqual(calls.at(-1)?.args.slice(0, 2), ['busy', 5]);
    await h.request('GET', '/distribution/reg:5000/team/app:1/json');
    assert.equal(calls.at(-1)?.args[0], 'reg:5000/team/app:1');
  });

  test('API 1.32: the pull platform is ignored before, passed on from', async () => {
    await h.request('POST', '/v1.31/images/create?fromImage=busybox&platform=linux/arm64');
    assert.equal((calls.at(-1)!.args[0] as { platform?: string }).platform, undefined);
    await h.request('POST', '/v1.32/images/create?fromImage=busybox&platform=linux/arm64');
    assert.equal((calls.at(-1)!.args[0] as { platform?: string }).platform, 'linux/arm64');
  });

  test('API 1.46: the push platform must be the local image’s (404 as dockerd); ignored before', async () => {
    const arm64 = encodeURIComponent('{"os":"linux","architecture":"arm64"}');
    const amd64 = encodeURIComponent('{"os":"linux","architecture":"amd64"}');
    const auth = { 'X-Registry-Auth': Buffer.from('{}').toString('base64') };
    const wrong = await h.request('POST', `/v1.46/images/busybox/push?tag=1&platform=${arm64}`, { headers: auth });
    assert.equal(wrong.status, 404);
    assert.equal(
      wrong.json.message,
      'image with reference busybox:1 was found but its platform (linux/amd64) does not match the specified platform (linux/arm64)',
    );
    assert.equal((await h.request('POST', `/v1.46/images/busybox/push?tag=1&platform=${amd64}`, { headers: auth })).status, 200);
    assert.equal((await h.request('POST', `/v1.45/images/busybox/push?tag=1&platform=${arm64}`, { headers: auth })).status, 200);
  });
});
