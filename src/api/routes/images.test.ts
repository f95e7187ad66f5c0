// Image routes on a recording fake backend: greedy names with slashes, tag 201, save's names list,
// archives streamed with their content type, commit's checks before the backend.
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import type { Writable } from 'node:stream';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { invalidParameter, notFound } from '../../errors.ts';
import { registerImageRoutes, type ImagesBackend } from './images.ts';

describe('image routes', () => {
  const { backend, calls } = fakeBackend<ImagesBackend>({
    list: [],
    inspect: { Id: 'sha256:1' },
    history: [],
    tag: undefined,
    remove: [{ Untagged: 'team/app:1' }],
    prune: { ImagesDeleted: null, SpaceReclaimed: 0 },
    prepareSave: (names: string[]) => {
      if (names.includes('missing')) throw notFound('reference does not exist');
      return async (out: Writable) => void out.write('TARBYTES');
    },
    load: async (body: AsyncIterable<Uint8Array>) => {
      let text = '';
      for await (const c of body) text += Buffer.from(c).toString();
      if (text.startsWith('broken')) throw invalidParameter('archive/tar: invalid tar header');
      return { messages: ['Loaded image: busybox:latest'], ids: [] };
    },
    commit: { Id: 'sha256:2' },
    prepareExport: async () => async (out: Writable) => void out.write('ROOTFS'),
  });
  const h = new RouteHarness((r) => registerImageRoutes(r, backend));
  after(() => h.close());

  test('names with slashes and registry ports reach the backend whole', async () => {
    await h.request('GET', '/images/localhost:5000/team/app:1/json');
    assert.deepEqual(calls.at(-1)?.args[0], 'localhost:5000/team/app:1');
    const t = await h.request('POST', '/images/team/app:1/tag?repo=other/app&tag=2');
    assert.equal(t.status, 201);
    assert.deepEqual(calls.at(-1)?.args, ['team/app:1', 'other/app', '2']);
    const rm = await h.request('DELETE', '/images/team/app:1?force=1');
    assert.deepEqual(rm.json, [{ Untagged: 'team/app:1' }]);
    assert.deepEqual(calls.at(-1)?.args, ['team/app:1', { force: true, noprune: false }]);
  });

  test('save takes repeated and comma-separated names, streams a tar, and 404s before any byte', async () => {
    const r = await h.request('GET', '/images/get?names=a,b&names=c');
    assert.equal(r.status, 200);
    assert.equal(r.headers['content-type'], 'application/x-tar');
    assert.equal(r.text, 'TARBYTES');
    assert.deepEqual(calls.at(-1)?.args[0], ['a', 'b', 'c']);
    assert.equal((await h.request('GET', '/images/get?names=missing')).status, 404);
    assert.equal((await h.request('GET', '/containers/c1/export')).text, 'ROOTFS');
  });

  test('load answers the loaded names as a JSON stream', async () => {
    const r = await h.request('POST', '/images/load', { raw: 'not really a tar' });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text.trim()), { stream: 'Loaded image: busybox:latest\n' });
  });

  test("a load that fails answers 200 with the error as the stream's message (dockerd; clients raise it)", async () => {
    const r = await h.request('POST', '/images/load', { raw: 'broken tar' });
    assert.equal(r.status, 200);
    assert.deepEqual(JSON.parse(r.text.trim()), {
      errorDetail: { message: 'archive/tar: invalid tar header' },
      error: 'archive/tar: invalid tar header',
    });
  });

  test('commit: container required, body an object or nothing, pause defaults to true', async () => {
    assert.equal((await h.request('POST', '/commit')).status, 400);
    assert.equal((await h.request('POST', '/commit?container=c1', { raw: '[1]' })).status, 400);
    const r = await h.request('POST', '/commit?container=c1&repo=app&tag=1&changes=CMD%20x');
    assert.equal(r.status, 201);
    assert.deepEqual(calls.at(-1)?.args[0], { container: 'c1', pause: true, changes: ['CMD x'], config: null, repo: 'app', tag: '1' });
  });
});
