// pull-options.ts: credentials kept in the spec, hidden from views, carried over by updates as
// dockerd's registryAuthFrom says; dockerd's pinned reference form.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  dropClientPullOptions,
  pinnedReference,
  pullAuthOf,
  setPullAuth,
  taskPullAuth,
  updatedPullAuth,
  withoutPullOptions,
} from './pull-options.ts';

const spec = (auth?: string) => {
  const s = { Name: 'web', TaskTemplate: { ContainerSpec: { Image: 'busybox', PullOptions: { RegistryAuth: 'ignored' } } } };
  dropClientPullOptions(s);
  setPullAuth(s, auth);
  return s;
};

test('credentials are stored in the spec and never in its view', () => {
  assert.equal(pullAuthOf(spec()), undefined, 'a client cannot set PullOptions itself');
  const s = spec('e30K');
  assert.equal(pullAuthOf(s), 'e30K');
  assert.equal(taskPullAuth(s.TaskTemplate), 'e30K');
  assert.deepEqual(withoutPullOptions(s), { Name: 'web', TaskTemplate: { ContainerSpec: { Image: 'busybox' } } });
  assert.deepEqual(withoutPullOptions(s.TaskTemplate), { ContainerSpec: { Image: 'busybox' } });
  assert.equal(pullAuthOf(s), 'e30K', 'the stored spec is not changed by its view');
});

test('an update keeps the spec’s credentials, or takes the previous spec’s, or the new ones', () => {
  const cur = { Spec: spec('cur'), PreviousSpec: spec('prev') };
  assert.equal(updatedPullAuth(undefined, undefined, cur), 'cur');
  assert.equal(updatedPullAuth(undefined, 'spec', cur), 'cur');
  assert.equal(updatedPullAuth(undefined, 'previous-spec', cur), 'prev');
  assert.equal(updatedPullAuth('new', 'previous-spec', cur), 'new');
  assert.throws(() => updatedPullAuth(undefined, 'previous-spec', { Spec: spec() }), /service does not have a previous spec/);
});

test('pinned references keep the tag, in the familiar form', () => {
  const p = pinnedReference('busybox')!;
  assert.equal(p.ref, 'busybox:latest');
  assert.equal(p.pinned('sha256:' + 'a'.repeat(64)), `busybox:latest@sha256:${'a'.repeat(64)}`);
  assert.equal(
    pinnedReference('127.0.0.1:5000/x/y:2')!.pinned('sha256:' + 'b'.repeat(64)),
    `127.0.0.1:5000/x/y:2@sha256:${'b'.repeat(64)}`,
  );
  assert.equal(pinnedReference(`busybox@sha256:${'c'.repeat(64)}`), null, 'already pinned');
});
