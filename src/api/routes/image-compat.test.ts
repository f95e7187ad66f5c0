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
    inspect: () => ({ Id: 'sha256:1', Size: 10, Descriptor: { digest: 'sha256:d' }, Os: 'linux', Architecture: 'amd64' }),
    history: [{ Id: 'sha256:1' }],
    prepareSave: () => async () => undefined,
    remove: [],
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

  test('list `manifests` read from 1.47; inspect `manifests` from 1.48', async () => {
    await list('1.46', '?manifests=1');
    assert.equal((calls.at(-1)!.args[0] as { manifests: boolean }).manifests, false);
    await list('1.47', '?manifests=1');
    assert.equal((calls.at(-1)!.args[0] as { manifests: boolean }).manifests, true);
    await list('1.47', '?manifests=0');
    assert.equal((calls.at(-1)!.args[0] as { manifests: boolean }).manifests, false);
    await h.request('GET', '/v1.47/images/busybox/json?manifests=1');
    assert.equal(calls.at(-1)!.args[2], undefined);
    await h.request('GET', '/v1.48/images/busybox/json?manifests=1');
    assert.deepEqual(calls.at(-1)!.args[2], { manifests: true });
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

  const amd64 = encodeURIComponent('{"os":"linux","architecture":"amd64"}');
  const arm64 = encodeURIComponent('{"os":"linux","architecture":"arm64"}');

  test('inspect platform from 1.49: the image must be of it (404 as dockerd); ignored before', async () => {
    assert.equal((await h.request('GET', `/v1.49/images/busybox/json?platform=${amd64}`)).status, 200);
    const other = await h.request('GET', `/v1.49/images/busybox/json?platform=${arm64}`);
    assert.equal(other.status, 404);
    assert.equal(
      other.json.message,
      'image with reference busybox was found but its platform (linux/amd64) does not match the specified platform (linux/arm64)',
    );
    assert.equal((await h.request('GET', `/v1.48/images/busybox/json?platform=${arm64}`)).status, 200);
    const both = await h.request('GET', `/v1.49/images/busybox/json?platform=${amd64}&manifests=1`);
    assert.equal(both.json.message, 'conflicting options: manifests and platform options cannot both be set');
    const half = await h.request('GET', `/v1.49/images/busybox/json?platform=${encodeURIComponent('{"os":"linux"}')}`);
    assert.equal(half.json.message, 'both OS and Architecture must be provided');
  });

  test('history platform from 1.48; save/load one platform at most and delete platforms decoded, by version', async () => {
    assert.equal((await h.request('GET', `/v1.48/images/busybox/history?platform=${arm64}`)).status, 404);
    assert.equal((await h.request('GET', `/v1.47/images/busybox/history?platform=${arm64}`)).status, 200);
    const two = await h.request('GET', `/v1.48/images/get?names=busybox&platform=${amd64}&platform=${arm64}`);
    assert.equal(two.json.message, 'multiple platform parameters not supported');
    assert.equal((await h.request('GET', `/v1.47/images/get?names=busybox&platform=${amd64}&platform=${arm64}`)).status, 200);
    assert.equal((await h.request('DELETE', '/v1.50/images/busybox?platforms=%7Bbad')).status, 400);
    assert.equal((await h.request('DELETE', '/v1.49/images/busybox?platforms=%7Bbad')).status, 200);
  });
});
