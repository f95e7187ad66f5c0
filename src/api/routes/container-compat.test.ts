// Version-dependent inspect answers: Aliases with the short ID and hostname before API 1.45.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspectForVersion, isUserDefinedNetwork, listForVersion } from './container-compat.ts';

const id = 'abcdef0123456789'.repeat(4);
const view = () =>
  Object.freeze({
    Id: id,
    Config: { Hostname: 'web' },
    NetworkSettings: { Networks: { bridge: { Aliases: null }, appnet: { Aliases: ['api', 'web'] }, other: { Aliases: null } } },
  });

test('before 1.45 user-defined networks list the short ID and hostname among Aliases (deduplicated)', () => {
  const v = view();
  const old = inspectForVersion(v, '1.44') as ReturnType<typeof view>;
  assert.deepEqual(old.NetworkSettings.Networks.appnet.Aliases, ['api', 'web', id.slice(0, 12)]);
  assert.deepEqual(old.NetworkSettings.Networks.other.Aliases, [id.slice(0, 12), 'web']);
  assert.equal(old.NetworkSettings.Networks.bridge.Aliases, null, 'the default bridge is not user-defined');
  assert.deepEqual(v.NetworkSettings.Networks.appnet.Aliases, ['api', 'web'], 'the shared view is untouched');
  assert.equal(inspectForVersion(v, '1.45'), v);
});

test('user-defined network modes', () => {
  for (const m of ['appnet', 'test 01']) assert.equal(isUserDefinedNetwork(m), true, m);
  for (const m of ['', 'default', 'bridge', 'host', 'none', 'container:x']) assert.equal(isUserDefinedNetwork(m), false, m);
});

test('ImageManifestDescriptor is left out of inspect before 1.48, kept from 1.48', () => {
  const v = Object.freeze({ Id: id, ImageManifestDescriptor: { digest: 'sha256:x' } });
  assert.equal('ImageManifestDescriptor' in (inspectForVersion(v, '1.47') as object), false);
  assert.deepEqual((inspectForVersion(v, '1.48') as typeof v).ImageManifestDescriptor, { digest: 'sha256:x' });
  assert.equal(v.ImageManifestDescriptor.digest, 'sha256:x', 'the shared view is untouched');
});

test('list entries: HostConfig.Annotations from 1.46, ImageManifestDescriptor from 1.48', () => {
  const e = Object.freeze({ Id: id, HostConfig: { NetworkMode: 'bridge', Annotations: { a: 'b' } }, ImageManifestDescriptor: { size: 1 } });
  const [old] = listForVersion([e], '1.45') as Array<Record<string, any>>;
  assert.deepEqual(old!.HostConfig, { NetworkMode: 'bridge' });
  assert.equal('ImageManifestDescriptor' in old!, false);
  const [mid] = listForVersion([e], '1.46') as Array<Record<string, any>>;
  assert.deepEqual(mid!.HostConfig.Annotations, { a: 'b' });
  assert.equal('ImageManifestDescriptor' in mid!, false);
  const list = [e];
  assert.equal(listForVersion(list, '1.48'), list);
});
