// containerd's environment: the daemon's, GOGC 50 unless ENGINE_CONTAINERD_GOGC or a GOGC says
// otherwise, and ENGINE_DISABLE_PIGZ as containerd's own switch.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { containerdEnv } from './containerd-launch.ts';

test('GOGC 50 by default; ENGINE_CONTAINERD_GOGC, then GOGC, override it; pigz off when asked', () => {
  assert.deepEqual(containerdEnv({ PATH: '/bin' }), { PATH: '/bin', GOGC: '50' });
  assert.equal(containerdEnv({ ENGINE_CONTAINERD_GOGC: '100' }).GOGC, '100');
  assert.equal(containerdEnv({ GOGC: 'off' }).GOGC, 'off');
  assert.equal(containerdEnv({ GOGC: '80', ENGINE_CONTAINERD_GOGC: '30' }).GOGC, '30');
  assert.equal(containerdEnv({ ENGINE_CONTAINERD_GOGC: 'lots' }).GOGC, '50', 'not a number: the default');
  assert.equal(containerdEnv({ ENGINE_DISABLE_PIGZ: '1' }).CONTAINERD_DISABLE_PIGZ, '1');
  assert.equal(containerdEnv({}).CONTAINERD_DISABLE_PIGZ, undefined);
});
