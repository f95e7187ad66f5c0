// Unit tests of the host network lock (network/host-lock.ts): where it lives (rootless: in
// rootlesskit's state directory) and that it serialises two holders.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { hostLockPath, withHostLock } from './host-lock.ts';

const dir = mkdtempSync(join(tmpdir(), 'engine-host-lock-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test("the lock is in /run, or in rootlesskit's state directory for a rootless daemon", () => {
  assert.equal(hostLockPath({}), existsSync('/run') ? '/run/engine-network.lock' : join(tmpdir(), 'engine-network.lock'));
  assert.equal(hostLockPath({ ROOTLESSKIT_STATE_DIR: '/run/user/1000/rk' }), '/run/user/1000/rk/engine-network.lock');
});

test('holders take turns and the lock is gone afterwards', async () => {
  const path = join(dir, 'lock');
  const order: string[] = [];
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const first = withHostLock(async () => {
    order.push('first in');
    await gate;
    order.push('first out');
  }, path);
  await new Promise((r) => setTimeout(r, 20));
  const second = withHostLock(async () => {
    order.push('second');
  }, path);
  await new Promise((r) => setTimeout(r, 50));
  release();
  await Promise.all([first, second]);
  assert.deepEqual(order, ['first in', 'first out', 'second']);
  assert.equal(existsSync(path), false);
});
