// builder.gc settings → prune policies.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { tmpdir } from 'node:os';
import { gcSettings } from './gc-config.ts';

test('defaults: enabled, one policy keeping 10% of the disk', () => {
  const s = gcSettings(undefined, tmpdir());
  assert.equal(s.enabled, true);
  assert.equal(s.policies.length, 1);
  assert.ok(s.policies[0]!.keepStorage > 0);
  assert.equal(s.policies[0]!.all, true);
});

test('policies with sizes and unused-for filters', () => {
  const s = gcSettings({ gc: { enabled: false, defaultKeepStorage: '1GB', policy: [{ keepStorage: '512MB', filter: ['unused-for=48h'] }, { all: true }] } }, tmpdir());
  assert.equal(s.enabled, false);
  assert.equal(s.policies[0]!.keepStorage, 512 * 1024 * 1024);
  assert.deepEqual(s.policies[0]!.filters.get('until'), ['48h']);
  assert.equal(s.policies[0]!.all, false);
  assert.equal(s.policies[1]!.all, true);
  assert.equal(s.policies[1]!.keepStorage, 1024 ** 3, 'a policy without keepStorage keeps defaultKeepStorage');
});
