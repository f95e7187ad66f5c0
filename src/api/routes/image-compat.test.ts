// The image routes' API-version gates on a real ApiServer with a recording fake backend: list
// entries and inspect answers at each side of 1.43, 1.44, 1.48 and 1.51, and the list parameters
// (`filter` before 1.41, `shared-size` from 1.42).
import assert from 'node:assert/strict';
import { after, describe, test } from 'node:test';
import { fakeBackend, RouteHarness } from '../../../test/helpers/route-harness.ts';
import { registerImageRoutes, type ImagesBackend } from './images.ts';

const untagged = { Id: 'sha256:1', RepoTags: [], RepoDigests: [], Size: 10, Containers: 2, Descriptor: { digest: 'sha256:d' } };
const tagged = { Id: 'sha256:2', RepoTags: ['busybox:latest'], RepoDigests: [], Size: 20, Containers: 0 };

describe('image routes by API version', () => {
  const { backend, calls } = fakeBackend<ImagesBackend>({
    list: () => [structuredClone(untagged), structuredClone(tagged)],
    inspect: () => ({ Id: 'sha256:1', Size: 10, Descriptor: { digest: 'sha256:d' } }),
  });
  const h = new RouteHarness((r) => registerImageRoutes(r, backend));
  after(() => h.close());
  const list = async (v: string, q = '') => (await h.request('GET', `/v${v}/images/json${q}`)).json;

  test('untagged images show <none> before 1.43, empty lists from', async () => {
    assert.deepEqual((await list('1.42'))[0].RepoTags, ['<none>:<none>']);
    assert.deepEqual((await list('1.42'))[0].RepoDigests, ['<none>@<none>']);
    assert.deepEqual((await list('1.42'))[1].RepoTags, ['busybox:latest'], 'a tagged image is as it is');
    assert.deepEqual((await list('1.43'))[0].RepoTags, []);
  });

  test('VirtualSize before 1.44, Descriptor from 1.48, Containers counted from 1.51', async () => {
    const old = (await list('1.43'))[0];
    assert.equal(old.VirtualSize, 10);
    assert.equal((await list('1.44'))[0].VirtualSize, undefined);
    assert.equal('Descriptor' in (await list('1.47'))[0], false);
    assert.deepEqual((await list('1.48'))[0].Descriptor, { digest: 'sha256:d' });
    assert.equal((await list('1.50'))[0].Containers, -1);
    assert.equal((await list('1.51'))[0].Containers, 2);
  });

  test('`filter` is a reference filter before 1.41 only; shared-size from 1.42', async () => {
    await list('1.40', '?filter=busy*&shared-size=1');
    let opts = calls.at(-1)!.args[0] as { filters: Map<string, string[]>; sharedSize: boolean };
    assert.deepEqual(opts.filters.get('reference'), ['busy*']);
    assert.equal(opts.sharedSize, false);
    await list('1.42', '?filter=busy*&shared-size=1');
    opts = calls.at(-1)!.args[0] as typeof opts;
    assert.equal(opts.filters.get('reference'), undefined);
    assert.equal(opts.sharedSize, true);
  });

  test('inspect: VirtualSize and a zero Created before 1.44, Descriptor from 1.48', async () => {
    const old = (await h.request('GET', '/v1.43/images/busybox/json')).json;
    assert.equal(old.VirtualSize, 10);
    assert.equal(old.Created, '0001-01-01T00:00:00Z');
    assert.equal('Descriptor' in old, false);
    const mid = (await h.request('GET', '/v1.44/images/busybox/json')).json;
    assert.equal(mid.VirtualSize, undefined);
    assert.equal(mid.Created, undefined);
    assert.deepEqual((await h.request('GET', '/v1.48/images/busybox/json')).json.Descriptor, { digest: 'sha256:d' });
  });
});
