// Version-dependent inspect answers: Aliases with the short ID and hostname before API 1.45.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { inspectForVersion, isUserDefinedNetwork } from './container-compat.ts';

const id = 'abcdef0123456789'.repeat(4);
const view = () =>
  Object.freeze({
    Id: id,
    Config: { Hostname: 'web' },
    NetworkSettings: { Networks: { bridge: { Aliases: null }, appnet: { Aliases: ['api', 'web'] }, other: { Aliases: null } } },
  });

test('before 1.45 user-defined networks list the short ID and hostname among Aliases (deduplicated)', () => {
  const v = view();
  const old = inspectForVersion(v, true) as ReturnType<typeof view>;
  assert.deepEqual(old.NetworkSettings.Networks.appnet.Aliases, ['api', 'web', id.slice(0, 12)]);
  assert.deepEqual(old.NetworkSettings.Networks.other.Aliases, [id.slice(0, 12), 'web']);
  assert.equal(old.NetworkSettings.Networks.bridge.Aliases, null, 'the default bridge is not user-defined');
  assert.deepEqual(v.NetworkSettings.Networks.appnet.Aliases, ['api', 'web'], 'the shared view is untouched');
  assert.equal(inspectForVersion(v, false), v);
});

test('user-defined network modes', () => {
  for (const m of ['appnet', 'test 01']) assert.equal(isUserDefinedNetwork(m), true, m);
  for (const m of ['', 'default', 'bridge', 'host', 'none', 'container:x']) assert.equal(isUserDefinedNetwork(m), false, m);
});
